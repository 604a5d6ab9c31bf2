package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker solve --model-solve gives the solver of a problem line a model
// of its own (an OpenAI-compatible server on loopback records the model
// each call asks; the line's input is atomic, so the solver alone is
// asked); the simulated model in a role or as --model, and a spec that
// is not one, exit 2 with nothing written.
func TestBinarySolveRoleModels(t *testing.T) {
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
	setChildEnv(t, "OPENAI_API_KEY", "sk-test")
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(problemSpecs, "sum-spec.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sum.json"), b, 0o644))
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "p", "problem": {"spec": "sum.json", "input": {"n": [1, 5]}}}`+"\n"), 0o644))
	out := filepath.Join(dir, "out.jsonl")
	c := start(t, nil, "solve", tasks, "--out", out, "--model", "openai:big", "--model-solve", "openai:small", "--base-url", fake.URL, "--progress", "off")
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	res := readResults(t, out)["id:p"]
	assert.Equal(t, batch.StatusSolved, res.Status, res.Error)
	assert.JSONEq(t, `6`, string(res.Answer))
	assert.Contains(t, res.Model, "openai:small", "the solver's model")
	mu.Lock()
	assert.Equal(t, map[string]int{"small": res.Samples}, asked, "every call to the solver's model")
	mu.Unlock()

	for _, args := range [][]string{
		{"--model", "openai:big", "--model-solve", "sim"},
		{"--model-solve", "openai:small"},
		{"--model", "openai:big", "--model-compose", "nosuch:model"},
	} {
		never := filepath.Join(dir, "never.jsonl")
		c := start(t, nil, append([]string{"solve", tasks, "--out", never, "--base-url", fake.URL, "--progress", "off"}, args...)...)
		assert.Equal(t, 2, c.wait(t, time.Minute), "%v: %s", args, c.stderr.String())
		assert.Contains(t, c.stderr.String(), "--model-")
		assert.NoFileExists(t, never)
	}
}
