package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker mcp --embedder: the vote tool's answer_schema may declare an
// "embedding" field, which the server's own embedder serves (here an
// Ollama server on loopback, reached through $OLLAMA_HOST, whose vectors
// make "the cat sat" and "a cat sat" one answer); a client's schema may
// not name a model of its own.
func TestBinaryMCPServerEmbedder(t *testing.T) {
	t.Parallel()
	vectors := map[string][]float32{"the cat sat": {1, 0}, "a cat sat": {0.99, 0.14}, "dogs ran": {0, 1}}
	var calls atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model, Input string }
		if r.URL.Path != "/api/embed" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "nomic-embed-text" || vectors[req.Input] == nil {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		calls.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"embeddings": [][]float32{vectors[req.Input]}})
	}))
	defer fake.Close()

	cmd := exec.Command(binary, "mcp", "--embedder", "ollama:nomic-embed-text", "--state", t.TempDir(), "--log-level", "warn")
	cmd.Env = append(cmd.Environ(), "OLLAMA_HOST="+fake.URL)
	cmd.Stderr = &syncBuffer{}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "binary-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	schema := func(extra map[string]any) map[string]any {
		ann := map[string]any{"kind": "embedding", "threshold": 0.9}
		for k, v := range extra {
			ann[k] = v
		}
		return map[string]any{"type": "object", "properties": map[string]any{"s": map[string]any{"type": "string", "x-mdap-match": ann}}}
	}
	cands := []map[string]any{{"text": `{"s": "the cat sat"}`}, {"text": `{"s": "a cat sat"}`}, {"text": `{"s": "dogs ran"}`}}
	out := ok(t, callTool(t, ctx, cs, "vote", map[string]any{"k": 2, "candidates": cands, "answer_schema": schema(nil)}, ""))
	assert.Equal(t, true, out["decided"], out["message"])
	assert.Positive(t, calls.Load(), "the server's embedder was called")

	res := callTool(t, ctx, cs, "vote", map[string]any{"k": 2, "candidates": cands, "answer_schema": schema(map[string]any{"model": "ollama:other"})}, "")
	require.True(t, res.IsError, resultText(res))
	assert.Contains(t, resultText(res), "may not name")
}
