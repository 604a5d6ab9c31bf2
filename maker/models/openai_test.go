package models_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// openaiCompletion is a chat completion as OpenAI sends it: one choice
// with text and a tool call, and usage with cached and reasoning tokens.
const openaiCompletion = `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"move = [1, 0, 2]","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"p\":1}"}}]},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":120,"completion_tokens":7,"total_tokens":127,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":2}}}`

// TestOpenAIErrorsAreClassified: an HTTP error of an OpenAI-compatible
// server is explained and classified (a refused key is ErrAuth).
func TestOpenAIErrorsAreClassified(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
	}))
	defer srv.Close()
	lm, err := models.Open("openai:sim-model", models.Options{BaseURL: srv.URL + "/v1", APIKey: "k"})
	require.NoError(t, err)
	_, err = lm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, llms.WithSeed(1))
	require.ErrorIs(t, err, models.ErrAuth)
	assert.Contains(t, err.Error(), "bad key")
}

// TestOpenAIClientPanicIsAnError: a reply langchaingo's OpenAI client
// panics on ({"choices":[null]}) fails the call with an error; the panic
// never reaches the caller.
func TestOpenAIClientPanicIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices":[null]}`)
	}))
	defer srv.Close()
	lm, err := models.Open("openai:sim-model", models.Options{BaseURL: srv.URL + "/v1", APIKey: "k"})
	require.NoError(t, err)
	var resp *llms.ContentResponse
	require.NotPanics(t, func() {
		resp, err = lm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	})
	require.Error(t, err)
	assert.Nil(t, resp)
	assert.Contains(t, err.Error(), "could not read the reply")
}

// TestIdleConnectionsFollowMaxInFlight: the pool keeps as many idle
// connections as calls the caller will have in flight.
func TestIdleConnectionsFollowMaxInFlight(t *testing.T) {
	for _, c := range []struct{ inflight, want int }{{0, models.DefaultIdleConns}, {5, 5}, {300, 300}} {
		lm, err := models.Open("openai:m", models.Options{BaseURL: "http://127.0.0.1:1/v1", MaxInFlight: c.inflight})
		require.NoError(t, err)
		pool := lm.(*models.Model).Pool()
		assert.Equal(t, c.want, pool.MaxIdleConnsPerHost, "MaxInFlight %d", c.inflight)
		assert.GreaterOrEqual(t, pool.MaxIdleConns, c.want)
	}
}

// TestOpenAITimeoutCoversTheBody: the timeout bounds reading the reply as
// well as waiting for its headers: a server that sends its headers and
// half a body, then stalls, fails the call at the timeout.
func TestOpenAITimeoutCoversTheBody(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000")
		_, _ = io.WriteString(w, `{"choices":[{"message":{"content":"mo`)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	lm, err := models.Open("openai:tiny", models.Options{BaseURL: srv.URL + "/v1", APIKey: "k", Timeout: 150 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	_, err = lm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "timeout")
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
}

// TestClientPanicIsNeverMapped: a client's panic carries a stack, whose
// program counters may read "429" to the providers' error mappers; in a
// CI run under -race, TestOpenAIClientPanicIsAnError's panic came back
// as "openai: rate_limit: Rate limit exceeded". A panic is never mapped:
// the error says the client could not read the reply, not rate_limit.
func TestClientPanicIsNeverMapped(t *testing.T) {
	lm, err := models.Open("openai:m", models.Options{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"})
	require.NoError(t, err)
	m := lm.(*models.Model)
	plain := m.Classify(context.Background(), errors.New("goroutine 7 [running]: pc=0x429a3f"))
	require.Contains(t, plain.Error(), "rate_limit", "the mapper reads a 429 in any text: the test's premise")
	panicked := m.Classify(context.Background(), fmt.Errorf("%w: %w", models.ErrClientPanic, errors.New("goroutine 7 [running]: pc=0x429a3f")))
	assert.NotContains(t, panicked.Error(), "rate_limit")
	assert.Contains(t, panicked.Error(), "could not read the reply")
}
