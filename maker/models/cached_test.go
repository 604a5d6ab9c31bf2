package models_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// Every provider path reads the cached prompt tokens its server reports
// into the usage the solver counts (maker.ResponseUsage is the solver's
// own reader): OpenAI's prompt_tokens_details.cached_tokens through
// langchaingo's client (one choice, several, stop words), Anthropic's cache_read_input_tokens (added to its input_tokens,
// which leaves cache reads out). Ollama's API reports no cached tokens
// (prompt_eval_count only): its cached count is 0 and its input is the
// whole prompt.
func TestCachedTokensFromEveryProvider(t *testing.T) {
	cleanEnv(t)
	openaiSrv := newServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, openaiCompletion) })
	anthropicSrv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"move = [1, 0, 2]"}],"stop_reason":"end_turn",`+
			`"usage":{"input_tokens":40,"output_tokens":7,"cache_read_input_tokens":1500,"cache_creation_input_tokens":0}}`)
	})
	ollamaSrv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, ollamaReply("move = [1, 0, 2]", "stop", 520, 7))
	})

	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "rules"), llms.TextParts(llms.ChatMessageTypeHuman, "state")}
	for _, c := range []struct {
		name, spec, base string
		opts             []llms.CallOption
		in, cached       int
	}{
		{"openai", "openai:m", openaiSrv.URL + "/v1", []llms.CallOption{llms.WithMaxTokens(20), llms.WithTemperature(0)}, 120, 64},
		{"openai, several choices", "openai:m", openaiSrv.URL + "/v1", []llms.CallOption{llms.WithMaxTokens(20), llms.WithN(2)}, 120, 64},
		{"openai, stop words", "openai:m", openaiSrv.URL + "/v1", []llms.CallOption{llms.WithMaxTokens(20), llms.WithStopWords([]string{"\n\n"})}, 120, 64},
		{"anthropic", "anthropic:claude-sonnet-4-5", anthropicSrv.URL + "/v1", []llms.CallOption{llms.WithMaxTokens(20)}, 1540, 1500},
		{"ollama reports none", "ollama:tiny", ollamaSrv.URL, []llms.CallOption{llms.WithMaxTokens(20)}, 520, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			lm, err := models.Open(c.spec, models.Options{BaseURL: c.base, APIKey: "k", Timeout: 5 * time.Second})
			require.NoError(t, err)
			resp, err := lm.GenerateContent(context.Background(), msgs, c.opts...)
			require.NoError(t, err)
			in, out, cached, ok := maker.ResponseUsage(resp)
			require.True(t, ok, "the server's own counts")
			assert.Equal(t, c.in, in, "input tokens")
			assert.Equal(t, 7, out, "output tokens")
			assert.Equal(t, c.cached, cached, "cached input tokens")
		})
	}
}
