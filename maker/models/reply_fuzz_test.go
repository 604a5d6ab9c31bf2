package models_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/ollama"
	"github.com/mdap-go/mdap/maker/models/openai"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// replySeeds are chat completions as providers send them, and near misses.
var replySeeds = []string{
	openaiCompletion,
	`{"choices":[{"message":{"content":"a"},"finish_reason":"stop"},{"message":{"content":"b","reasoning_content":"r"},"finish_reason":"length"}],"usage":{"prompt_tokens":1}}`,
	`{"choices":[{"message":{"content":null,"function_call":{"name":"f","arguments":"{}"}},"finish_reason":"function_call"}]}`,
	`{"choices":[null]}`,
	`{"choices":[]}`,
	`{"choices":null}`,
	`{"choices":[{"message":{"content":["a"]}}]}`,
	`{"choices":[{"message":{"tool_calls":[{"id":"1","type":"function","function":{"name":"n","arguments":{"x":1}}}]}}]}`,
	`{"usage":{"prompt_tokens":1e40}}`,
	`{"error":{"message":"bad key","type":"invalid_request_error","code":"k"}}`,
	`{"error":"model not found"}`,
	`{"data":[{"id":"m"}]}`,
	`{"models":[{"name":"m"}]}`,
	"{\"done\":false}\n{\"done\":true,\"done_reason\":\"stop\"}",
	"",
	"\xff",
}

// FuzzReplyParsing feeds one body to every parser of provider output in
// this package and its providers': the OpenAI-compatible call through
// langchaingo's client (served over loopback, as a provider would), the
// error-body reader and the two model-list readers (Ollama's reply-stream
// observer has its own, ollama.FuzzStreamLines). None may panic (a panic
// of langchaingo's client is an error); where langchaingo's client
// decodes the body, the call returns exactly its response; the error
// reader's message is bounded.
func FuzzReplyParsing(f *testing.F) {
	for _, s := range replySeeds {
		f.Add([]byte(s), uint8(7))
	}
	var mu sync.Mutex
	var served []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		mu.Lock()
		b := served
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	lm, err := models.Open("openai:sim-model", models.Options{BaseURL: srv.URL + "/v1", APIKey: "k"})
	require.NoError(f, err)
	m := lm.(*models.Model)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "state")}
	opts := []llms.CallOption{llms.WithTemperature(0.1), llms.WithMaxTokens(750), llms.WithSeed(1)}
	all := append(opts[:len(opts):len(opts)], m.Extra...)

	f.Fuzz(func(t *testing.T, body []byte, _ uint8) {
		if len(body) > 64<<10 {
			return
		}
		mu.Lock()
		served = body
		mu.Unlock()
		ctx := context.Background()

		// The whole call (transport, classification) on the body.
		full, fullErr := m.GenerateContent(ctx, msgs, opts...)
		if fullErr == nil {
			require.NotEmpty(t, full.Choices, "a reply without a choice is an error")
		}
		ref, refErr, panicked := langchaingoReply(ctx, m, msgs, all)
		if panicked {
			require.Error(t, fullErr, "langchaingo's client panics on %q", body)
		}
		if !panicked && refErr == nil {
			require.NoError(t, fullErr, "langchaingo decodes %q", body)
			stripResponseMeta(t, full, body)
			require.Equal(t, ref, full, "the reply differs from langchaingo's for %q", body)
		}

		msg, _ := models.ErrorMessage(body)
		require.LessOrEqual(t, len(msg), max(300+len("..."), len(body)))

		for _, parse := range []func([]byte) ([]string, error){openai.ModelNames, ollama.ModelNames} {
			names, err := parse(body)
			require.Equal(t, err == nil, names != nil)
		}
	})
}

// langchaingoReply is langchaingo's response for the served body, and
// whether its client panicked on it.
func langchaingoReply(ctx context.Context, m *models.Model, msgs []llms.MessageContent, opts []llms.CallOption) (resp *llms.ContentResponse, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	resp, err = m.LLM.GenerateContent(ctx, msgs, opts...)
	return resp, err, false
}

// stripResponseMeta checks the response id and model GenerateContent adds
// to each choice (what responseMeta reads of body) and takes them out, so
// that the rest can be compared with langchaingo's own reply.
func stripResponseMeta(t *testing.T, resp *llms.ContentResponse, body []byte) {
	t.Helper()
	id, model := models.ResponseMeta(body[:min(len(body), models.HeadLimit)])
	for _, ch := range resp.Choices {
		if ch == nil || (id == "" && model == "") {
			continue
		}
		require.Equal(t, id, ch.GenerationInfo[maker.InfoResponseID])
		require.Equal(t, model, ch.GenerationInfo[maker.InfoResponseModel])
		delete(ch.GenerationInfo, maker.InfoResponseID)
		delete(ch.GenerationInfo, maker.InfoResponseModel)
		if len(ch.GenerationInfo) == 0 {
			ch.GenerationInfo = nil
		}
	}
}
