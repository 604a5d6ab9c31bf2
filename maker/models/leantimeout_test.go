package models

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestLeanTimeoutCoversTheBody: the lean path's timeout (a deadline on
// the call's context) bounds reading the reply as well as waiting for
// its headers: a server that sends its headers and half a body, then
// stalls, fails the call at the timeout.
func TestLeanTimeoutCoversTheBody(t *testing.T) {
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
	lm, err := Open("openai:tiny", Options{BaseURL: srv.URL + "/v1", APIKey: "k", Timeout: 150 * time.Millisecond})
	require.NoError(t, err)
	m := lm.(*model)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	o, ok := m.lean.accepts(msgs, m.extra)
	require.True(t, ok)
	start := time.Now()
	_, err = m.lean.generate(context.Background(), msgs, o)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
}
