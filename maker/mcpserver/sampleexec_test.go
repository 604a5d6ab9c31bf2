package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSampleAndVoteNormalisesCallsByTheDeclaredTools: a model that spells
// one call two ways ("paths": "[\"src\"]" and ["src"], in turn) decides at
// once under sample_and_vote with the tool declared, as a run's executor
// heals them into one call.
func TestSampleAndVoteNormalisesCallsByTheDeclaredTools(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		args := `{"paths": ["src"]}`
		if i%2 == 0 {
			args = `{"paths": "[\"src\"]"}`
		}
		msg := map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
			"id": "call", "type": "function", "function": map[string]any{"name": "ls", "arguments": args}}}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "tool_calls"}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	defer srv.Close()
	c, _ := connect(t, mcpserver.Config{Models: []string{"openai:fake"}, BaseURL: srv.URL})
	ls := []any{map[string]any{"type": "function", "function": map[string]any{"name": "ls", "parameters": map[string]any{
		"type": "object", "required": []any{"paths"},
		"properties": map[string]any{"paths": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}}}}
	out := decode[mcpserver.SampleAndVoteOutput](t, call(t, context.Background(), c.ClientSession, "sample_and_vote", map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "List the sources."}},
		"tools":    ls, "k": 2, "parallel": 1,
	}, nil))
	require.True(t, out.Decided, out.Message)
	assert.Equal(t, 1, out.Winner.DecidedAt, "the two spellings are one call")
	assert.Contains(t, out.Winner.Canonical, `["src"]`)
}
