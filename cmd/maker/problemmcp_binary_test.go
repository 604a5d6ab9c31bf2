package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker mcp's solve_problem runs a problem spec's problem from a spec
// file under --root, on the simulated model (the spec names the sort
// family), and refuses a spec_path outside the root.
func TestBinaryMCPProblemSpec(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	b, err := os.ReadFile(filepath.Join(problemSpecs, "sort-spec.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "sort.json"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(root), "outside.json"), b, 0o644))
	cmd := exec.Command(binary, "mcp", "--root", root, "--state", state, "--log-level", "warn")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "binary-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	out := ok(t, callTool(t, ctx, cs, "solve_problem", map[string]any{"problem": map[string]any{
		"spec_path": "sort.json", "input": map[string]any{"list": []int{5, 3, 9, 1, 7}}}}, ""))
	assert.Equal(t, true, out["solved"], out["message"])
	assert.Equal(t, true, out["checked"])
	assert.Equal(t, []any{1.0, 3.0, 5.0, 7.0, 9.0}, out["answer"])
	assert.FileExists(t, filepath.Join(state, out["journal"].(string)))

	res := callTool(t, ctx, cs, "solve_problem", map[string]any{"problem": map[string]any{
		"spec_path": "../outside.json", "input": map[string]any{"list": []int{2, 1}}}}, "")
	require.True(t, res.IsError, resultText(res))
	assert.Contains(t, resultText(res), "relative to the server's root")
}

// maker mcp's solve_problem takes role_models: the solver's calls go to
// its own model (an OpenAI-compatible server on loopback that answers
// every call and records the model asked).
func TestBinaryMCPRoleModels(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := map[string]int{}
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		asked[req.Model]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": `{"answer": 6}`}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	defer fake.Close()
	root := t.TempDir()
	b, err := os.ReadFile(filepath.Join(problemSpecs, "sum-spec.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "sum.json"), b, 0o644))
	cmd := exec.Command(binary, "mcp", "--root", root, "--state", t.TempDir(), "--model", "openai:big", "--model", "openai:small",
		"--base-url", fake.URL, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-test")
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "binary-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	out := ok(t, callTool(t, ctx, cs, "solve_problem", map[string]any{
		"problem": map[string]any{"spec_path": "sum.json", "input": map[string]any{"n": []int{1, 5}}}, // atomic: the solver alone
		"models":  []string{"openai:big"}, "role_models": map[string]any{"solve": []string{"openai:small"}}}, ""))
	assert.Equal(t, true, out["solved"], out["message"])
	assert.Equal(t, false, out["checked"], "the sum spec has no checker")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]int{"small": int(out["samples"].(float64))}, asked)
}
