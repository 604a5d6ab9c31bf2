package models

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestOpenSpecErrors(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
	for _, spec := range []string{"", "gpt-4", "openai:", "bard:x", "openai:gpt-4.1-mini", "anthropic:claude", "sim"} {
		_, err := Open(spec, Options{})
		assert.ErrorIs(t, err, ErrSpec, spec)
	}
}

// TestOpenAICompatibleServer talks to a real HTTP server on loopback, the
// way a local vLLM, llama.cpp or Ollama /v1 endpoint would answer.
func TestOpenAICompatibleServer(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	var got map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/v1/chat/completions", r.URL.Path)
		auth = r.Header.Get("Authorization")
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":"{\"move\":[1,0,2]}"},"finish_reason":"length"}],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}`))
	}))
	defer srv.Close()

	m, err := Open("openai:tiny", Options{BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, llms.WithMaxTokens(33))
	require.NoError(t, err)
	c := resp.Choices[0]
	assert.Equal(t, `{"move":[1,0,2]}`, c.Content)
	assert.Equal(t, "length", c.StopReason)
	assert.Equal(t, 7, c.GenerationInfo["CompletionTokens"])
	assert.Equal(t, "Bearer placeholder", auth)
	assert.EqualValues(t, 33, got["max_tokens"], "local servers get the legacy max_tokens field")
	assert.Equal(t, "tiny", got["model"])
}

func TestProviderErrorsAreMapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded"}}`))
	}))
	defer srv.Close()
	m, err := Open("openai:tiny", Options{BaseURL: srv.URL})
	require.NoError(t, err)
	_, err = m.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	require.Error(t, err)
	assert.True(t, llms.IsRateLimitError(err), "error %v should be recognised as a rate limit", err)
}
