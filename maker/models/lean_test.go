package models

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// leanRecorder is an OpenAI-compatible server that records request bodies and
// answers with a fixed completion.
type leanRecorder struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	paths  []string
}

const leanCompletion = `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"move = [1, 0, 2]","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"p\":1}"}}]},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":120,"completion_tokens":7,"total_tokens":127,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":2}}}`

// leanCompletion3 answers a request for three choices (n: 3).
const leanCompletion3 = `{"id":"y","object":"chat.completion","choices":[` +
	`{"index":0,"message":{"role":"assistant","content":"move = [1, 0, 2]"},"finish_reason":"stop"},` +
	`{"index":1,"message":{"role":"assistant","content":"move = [2, 0, 1]"},"finish_reason":"length"},` +
	`{"index":2,"message":{"role":"assistant","content":"","tool_calls":[{"id":"c2","type":"function","function":{"name":"read","arguments":"{}"}}]},"finish_reason":"tool_calls"}],` +
	`"usage":{"prompt_tokens":120,"completion_tokens":21,"total_tokens":141,"prompt_tokens_details":{"cached_tokens":64}}}`

func newLeanRecorder(t *testing.T) *leanRecorder {
	r := &leanRecorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var body map[string]any
		require.NoError(t, json.Unmarshal(b, &body), string(b))
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.paths = append(r.paths, req.URL.Path+" "+req.Header.Get("Authorization")+" "+req.Header.Get("Content-Type"))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if body["n"] == 3.0 {
			_, _ = io.WriteString(w, leanCompletion3)
			return
		}
		_, _ = io.WriteString(w, leanCompletion)
	}))
	t.Cleanup(r.Close)
	return r
}

// TestLeanPathIsLangchaingos: for the calls a run makes, the lean path
// sends the request langchaingo's client sends (the same JSON, path and
// headers) and returns the response it returns, step after step (the
// memoised messages follow the prompt).
func TestLeanPathIsLangchaingos(t *testing.T) {
	srv := newLeanRecorder(t)
	lm, err := Open("openai:sim-model", Options{BaseURL: srv.URL + "/v1/", APIKey: "k"})
	require.NoError(t, err)
	m := lm.(*model)
	require.NotNil(t, m.lean)
	ctx := context.Background()
	for step, opts := range [][]llms.CallOption{
		{llms.WithTemperature(0), llms.WithMaxTokens(750), llms.WithSeed(1)},
		{llms.WithTemperature(0.1), llms.WithMaxTokens(750), llms.WithSeed(2)},
		{llms.WithTemperature(0.7), llms.WithJSONMode(), llms.WithN(1)},
		{llms.WithTemperature(0.25), llms.WithSeed(3), llms.WithMaxTokens(9)},
		{llms.WithTemperature(0.1), llms.WithMaxTokens(750), llms.WithSeed(4), llms.WithN(3)}, // a wave in one request
	} {
		msgs := []llms.MessageContent{
			llms.TextParts(llms.ChatMessageTypeSystem, "rules \"quoted\" \u2028 <tags> & more"),
			llms.TextParts(llms.ChatMessageTypeHuman, "state "+string(rune('a'+step/2))),
			llms.TextParts(llms.ChatMessageTypeAI, "earlier"),
		}
		_, ok := m.lean.accepts(msgs, append(opts, m.extra...))
		require.True(t, ok, "step %d goes the lean way", step)
		lean, err := m.GenerateContent(ctx, msgs, opts...)
		require.NoError(t, err)
		ref, err := m.llm.GenerateContent(ctx, msgs, append(opts, m.extra...)...)
		require.NoError(t, err)
		assert.Equal(t, ref, lean, "step %d: the response", step)
		srv.mu.Lock()
		n := len(srv.bodies)
		assert.Equal(t, srv.bodies[n-1], srv.bodies[n-2], "step %d: the request body", step)
		assert.Equal(t, srv.paths[n-1], srv.paths[n-2], "step %d: the path and headers", step)
		srv.mu.Unlock()
	}
}

// TestLeanPathLeavesTheRestToLangchaingo: tools, stop words, non-text
// parts and tool messages are not the lean path's.
func TestLeanPathLeavesTheRestToLangchaingo(t *testing.T) {
	srv := newLeanRecorder(t)
	lm, err := Open("openai:sim-model", Options{BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)
	m := lm.(*model)
	text := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	for name, c := range map[string]struct {
		msgs []llms.MessageContent
		opts []llms.CallOption
	}{
		"tools":        {text, []llms.CallOption{llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "read"}}})}},
		"stop":         {text, []llms.CallOption{llms.WithStopWords([]string{"x"})}},
		"top_p":        {text, []llms.CallOption{llms.WithTopP(0.5)}},
		"metadata":     {text, []llms.CallOption{llms.WithMetadata(map[string]any{"user": "u"})}},
		"two parts":    {[]llms.MessageContent{{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.TextContent{Text: "a"}, llms.TextContent{Text: "b"}}}}, nil},
		"image":        {[]llms.MessageContent{{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.ImageURLContent{URL: "http://x"}}}}, nil},
		"tool message": {[]llms.MessageContent{{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Content: "r"}}}}, nil},
	} {
		_, ok := m.lean.accepts(c.msgs, append(c.opts, m.extra...))
		assert.False(t, ok, name)
	}
	_, ok := m.lean.accepts(text, m.extra)
	assert.True(t, ok)
}

// TestLeanPathErrorsAreClassified: an HTTP error on the lean path is
// explained as on langchaingo's.
func TestLeanPathErrorsAreClassified(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
	}))
	defer srv.Close()
	lm, err := Open("openai:sim-model", Options{BaseURL: srv.URL + "/v1", APIKey: "k"})
	require.NoError(t, err)
	_, err = lm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, llms.WithSeed(1))
	require.ErrorIs(t, err, ErrAuth)
	assert.Contains(t, err.Error(), "HTTP 401: bad key")
}

func BenchmarkOpenAICall(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, leanCompletion)
	}))
	defer srv.Close()
	lm, err := Open("openai:sim-model", Options{BaseURL: srv.URL + "/v1", APIKey: "k"})
	require.NoError(b, err)
	m := lm.(*model)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, string(make([]byte, 2000))), llms.TextParts(llms.ChatMessageTypeHuman, "state")}
	for _, path := range []string{"lean", "langchaingo"} {
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				opts := []llms.CallOption{llms.WithTemperature(0.1), llms.WithMaxTokens(750), llms.WithSeed(i + 1)}
				var err error
				if path == "lean" {
					_, err = m.GenerateContent(context.Background(), msgs, opts...)
				} else {
					_, err = m.llm.GenerateContent(context.Background(), msgs, append(opts, m.extra...)...)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestIdleConnectionsFollowMaxInFlight: the pool keeps as many idle
// connections as calls the caller will have in flight.
func TestIdleConnectionsFollowMaxInFlight(t *testing.T) {
	for _, c := range []struct{ inflight, want int }{{0, DefaultIdleConns}, {5, 5}, {300, 300}} {
		lm, err := Open("openai:m", Options{BaseURL: "http://127.0.0.1:1/v1", MaxInFlight: c.inflight})
		require.NoError(t, err)
		pool := lm.(*model).probe.Transport.(*http.Transport)
		assert.Equal(t, c.want, pool.MaxIdleConnsPerHost, "MaxInFlight %d", c.inflight)
		assert.GreaterOrEqual(t, pool.MaxIdleConns, c.want)
	}
}

// TestLeanLegacyFieldIsLangchaingos: the reply cap goes in the field
// langchaingo's client would put it in, with and without the model's own
// WithLegacyMaxTokensField (a local server, or OpenAI's API) and whatever
// the call's metadata says: the lean path applies the model's option
// itself, after the call's, as langchaingo does.
func TestLeanLegacyFieldIsLangchaingos(t *testing.T) {
	srv := newLeanRecorder(t)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	for _, local := range []bool{false, true} {
		for _, meta := range []string{"", "true", "false"} {
			// Options of their own for each client: langchaingo's
			// legacy option writes into the call's metadata map.
			options := func() []llms.CallOption {
				opts := []llms.CallOption{llms.WithMaxTokens(9)}
				if meta != "" {
					opts = append(opts, llms.WithMetadata(map[string]any{"openai:use_legacy_max_tokens": meta == "true"}))
				}
				return opts
			}
			var extra []llms.CallOption
			if local {
				extra = append(extra, openai.WithLegacyMaxTokensField())
			}
			llm, err := openai.New(openai.WithModel("m"), openai.WithBaseURL(srv.URL+"/v1"), openai.WithToken("k"))
			require.NoError(t, err)
			_, err = llm.GenerateContent(context.Background(), msgs, append(options(), extra...)...)
			require.NoError(t, err)
			srv.mu.Lock()
			want := srv.bodies[len(srv.bodies)-1]
			srv.mu.Unlock()

			l := newLeanChat(http.DefaultTransport, 0, srv.URL+"/v1", "k", "m", local)
			o, ok := l.accepts(msgs, options())
			require.True(t, ok)
			b := l.body(msgs, o)
			var got map[string]any
			require.NoError(t, json.Unmarshal(b, &got))
			for _, field := range []string{"max_tokens", "max_completion_tokens"} {
				assert.Equal(t, want[field], got[field], "local %v, metadata %q: %s", local, meta, field)
			}
		}
	}
}

// TestLeanMessagesAreMarshals: call after call, the messages' JSON is what
// json.Marshal writes of them (role and content, HTML-safe, invalid UTF-8
// replaced); a message the last call had at the same place, with the same
// role and text, is reused, not encoded again, and only then.
func TestLeanMessagesAreMarshals(t *testing.T) {
	l := newLeanChat(http.DefaultTransport, 0, "http://127.0.0.1:1/v1", "k", "m", true)
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	names := map[llms.ChatMessageType]string{llms.ChatMessageTypeSystem: "system", llms.ChatMessageTypeAI: "assistant", llms.ChatMessageTypeHuman: "user", llms.ChatMessageTypeGeneric: "user"}
	rules := "rules <b>&</b> \"quoted\" \u2028 \xff café\n"
	calls := [][]llms.MessageContent{
		{llms.TextParts(llms.ChatMessageTypeSystem, rules), llms.TextParts(llms.ChatMessageTypeHuman, "state 1")},
		{llms.TextParts(llms.ChatMessageTypeSystem, rules), llms.TextParts(llms.ChatMessageTypeHuman, "state 1")},
		{llms.TextParts(llms.ChatMessageTypeSystem, rules), llms.TextParts(llms.ChatMessageTypeHuman, "state 2")},
		{llms.TextParts(llms.ChatMessageTypeHuman, rules), llms.TextParts(llms.ChatMessageTypeHuman, "state 2")},
		{llms.TextParts(llms.ChatMessageTypeHuman, rules), llms.TextParts(llms.ChatMessageTypeAI, "state 2"), llms.TextParts(llms.ChatMessageTypeGeneric, "more")},
		{llms.TextParts(llms.ChatMessageTypeHuman, rules)},
		{},
	}
	var last *leanMemo
	for c, msgs := range calls {
		want := make([]message, len(msgs))
		for i, m := range msgs {
			want[i] = message{names[m.Role], m.Parts[0].(llms.TextContent).Text}
		}
		b, err := json.Marshal(want)
		require.NoError(t, err)
		memo := l.messages(msgs)
		assert.Equal(t, string(b), string(memo.appendMessages(nil)), "call %d", c)
		assert.Equal(t, len(b), memo.size, "call %d: the array's length", c)
		assert.Same(t, memo, l.memo.Load(), "call %d: kept", c)
		if c == 1 {
			assert.Same(t, last, memo, "the last call's messages: its memo, not a new one")
		}
		for i, m := range msgs {
			kept := last != nil && i < len(last.texts) && last.roles[i] == m.Role && last.texts[i] == m.Parts[0].(llms.TextContent).Text
			same := last != nil && i < len(last.parts) && &memo.parts[i][0] == &last.parts[i][0]
			assert.Equal(t, kept, same, "call %d, message %d: reused", c, i)
		}
		last = memo
	}
}

// TestLeanBodyIsJSONForAnyModelName: the model's name is written as
// encoding/json writes it, control characters and all.
func TestLeanBodyIsJSONForAnyModelName(t *testing.T) {
	name := "m<&>\x01\u2028é\"\\"
	l := newLeanChat(http.DefaultTransport, 0, "http://127.0.0.1:1/v1", "k", name, true)
	b := l.body([]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, llms.CallOptions{Temperature: 0.5, MaxTokens: 7})
	var got struct {
		Model    string `json:"model"`
		Messages []struct{ Role, Content string }
	}
	require.NoError(t, json.Unmarshal(b, &got), "%s", b)
	assert.Equal(t, name, got.Model)
	want, err := json.Marshal(name)
	require.NoError(t, err)
	assert.Contains(t, string(b), `{"model":`+string(want)+`,"messages":[{"role":"user","content":"hi"}],`)
}

// TestLeanPathFollowsRedirects: a redirect is followed as langchaingo's
// client follows it (the request sent again to the new place).
func TestLeanPathFollowsRedirects(t *testing.T) {
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		srv := newLeanRecorder(t)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			http.Redirect(w, req, srv.URL+req.URL.Path, code)
		}))
		lm, err := Open("openai:sim-model", Options{BaseURL: front.URL + "/v1", APIKey: "k"})
		require.NoError(t, err)
		m := lm.(*model)
		msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
		lean, err := m.GenerateContent(context.Background(), msgs, llms.WithSeed(1))
		require.NoError(t, err, "HTTP %d", code)
		ref, err := m.llm.GenerateContent(context.Background(), msgs, append([]llms.CallOption{llms.WithSeed(1)}, m.extra...)...)
		require.NoError(t, err)
		assert.Equal(t, ref, lean, "HTTP %d", code)
		srv.mu.Lock()
		require.Len(t, srv.bodies, 2)
		assert.Equal(t, srv.bodies[1], srv.bodies[0], "HTTP %d: the body sent on", code)
		assert.Equal(t, srv.paths[1], srv.paths[0], "HTTP %d: the path and headers", code)
		srv.mu.Unlock()
		front.Close()
	}
	// A 3xx without a Location is an answer, as for the client: sent once.
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	lm, err := Open("openai:sim-model", Options{BaseURL: srv.URL + "/v1", APIKey: "k"})
	require.NoError(t, err)
	l := lm.(*model).lean
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	_, err = l.generate(context.Background(), msgs, llms.CallOptions{})
	require.Error(t, err)
	assert.Equal(t, int32(1), asked.Load(), "requests sent")
	l.direct = false
	_, errClient := l.generate(context.Background(), msgs, llms.CallOptions{})
	require.Error(t, errClient)
	assert.Equal(t, errClient.Error(), err.Error())
}

// TestLeanPathTransportErrorsAreTheClients: without the client, a
// transport error is the one http.Client.Do returns: a *url.Error naming
// the method and the URL, the password of a URL with credentials hidden.
func TestLeanPathTransportErrorsAreTheClients(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens there now
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	https := strings.Replace(plain.URL, "http://", "https://", 1) + "/v1" // a plain server: http.ErrSchemeMismatch
	for _, base := range []string{srv.URL + "/v1", strings.Replace(srv.URL, "http://", "http://user:secret@", 1) + "/v1", https} {
		lm, err := Open("openai:sim-model", Options{BaseURL: base, APIKey: "k"})
		require.NoError(t, err)
		l := lm.(*model).lean
		msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
		_, err = l.generate(context.Background(), msgs, llms.CallOptions{})
		var ue *url.Error
		require.ErrorAs(t, err, &ue, base)
		assert.Equal(t, "Post", ue.Op)
		assert.NotContains(t, err.Error(), "secret")
		direct := l.direct
		l.direct = false
		_, errClient := l.generate(context.Background(), msgs, llms.CallOptions{})
		assert.Equal(t, errClient.Error(), err.Error(), base)
		assert.Equal(t, !strings.Contains(base, "@"), direct, "%s: sent without the client", base)
		if base == https {
			assert.ErrorIs(t, err, http.ErrSchemeMismatch)
		}
	}
}
