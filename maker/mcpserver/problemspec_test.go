package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var problemSpecs = filepath.Join("..", "problems", "testdata")

// readSpec returns a problem spec of maker/problems' testdata as a JSON
// object.
func readSpec(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(problemSpecs, name))
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

// solve_problem runs a problem spec's problem, the spec inline or a file
// under the server's root, on the simulated model (the spec names the
// sort family): checked, journaled, resumed.
func TestSolveProblemRunsProblemSpecs(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	b, err := os.ReadFile(filepath.Join(problemSpecs, "sort-spec.json"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "specs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "specs", "sort.json"), b, 0o644))
	cfg := mcpserver.Config{Root: root, State: state}
	cfg.Sim.Seed = 5
	c, _ := connect(t, cfg)
	ctx := context.Background()
	args := map[string]any{"problem": map[string]any{"spec": readSpec(t, "sort-spec.json"), "input": map[string]any{"list": []int{9, 4, 7, 1, 8, 2}}}}
	out := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem", args, nil))
	assert.True(t, out.Solved, out.Message)
	assert.True(t, out.Checked)
	assert.True(t, out.Correct)
	assert.Equal(t, []any{1.0, 2.0, 4.0, 7.0, 8.0, 9.0}, out.Answer)
	assert.Equal(t, "sim", out.Model)
	assert.FileExists(t, filepath.Join(state, out.Journal))
	assert.Regexp(t, `^sort-spec-[0-9a-f]{12}\.jsonl$`, out.Journal, "named after the spec")

	args["resume"] = true
	again := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem", args, nil))
	assert.Equal(t, out.Answer, again.Answer)
	assert.Equal(t, out.Samples, again.Samples)
	assert.Positive(t, again.Resumed, "every decision read back")

	byPath := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem",
		map[string]any{"problem": map[string]any{"spec_path": "specs/sort.json", "input": map[string]any{"list": []int{3, 1, 2}}}}, nil))
	assert.True(t, byPath.Solved, byPath.Message)
	assert.Equal(t, []any{1.0, 2.0, 3.0}, byPath.Answer)

	// The same path with other text is another spec: another journal.
	changed := readSpec(t, "sort-spec.json")
	changed["max_depth"] = 5
	b, err = json.Marshal(changed)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "specs", "sort.json"), b, 0o644))
	other := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem",
		map[string]any{"problem": map[string]any{"spec_path": "specs/sort.json", "input": map[string]any{"list": []int{3, 1, 2}}}}, nil))
	assert.True(t, other.Solved, other.Message)
	assert.NotEqual(t, byPath.Journal, other.Journal, "the journal's name hashes the spec's text")
}

// A problem spec reaches no file outside the server's root (spec_path
// absolute, climbing out, or through a symbolic link; a schema's
// external $ref) and names no model or endpoint of its own: the
// server's rules on models and base_url are solve_problem's; a bad
// spec, a bad input and a tree over the server's bound are refused;
// the simulated model does not play a spec without a family.
func TestSolveProblemSpecIsBounded(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "spec.json"), []byte(`{}`), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "spec.json"), filepath.Join(root, "link.json")))
	c, _ := connect(t, mcpserver.Config{Root: root, State: t.TempDir(), MaxSteps: 1000})
	ctx := context.Background()
	sortSpec := readSpec(t, "sort-spec.json")
	list := map[string]any{"list": []int{3, 1, 2}}
	withRef := readSpec(t, "sort-spec.json")
	withRef["answer"] = map[string]any{"$ref": "file://" + filepath.Join(outside, "spec.json")}
	noFamily := readSpec(t, "sum-spec.json")
	deep := readSpec(t, "sort-spec.json")
	deep["max_depth"], deep["max_breadth"] = 20, 8
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"problem": map[string]any{"spec_path": filepath.Join(outside, "spec.json"), "input": list}}, "relative to the server's root"},
		{map[string]any{"problem": map[string]any{"spec_path": "../spec.json", "input": list}}, "relative to the server's root"},
		{map[string]any{"problem": map[string]any{"spec_path": "link.json", "input": list}}, "out of the server's root"},
		{map[string]any{"problem": map[string]any{"spec_path": "none.json", "input": list}}, "no such file under the server's root"},
		{map[string]any{"problem": map[string]any{"spec": withRef, "input": list}}, "invalid problem spec"},
		{map[string]any{"problem": map[string]any{"spec": map[string]any{"name": "x", "model": "openai:gpt"}, "input": list}}, "unknown field"},
		{map[string]any{"problem": map[string]any{"spec": sortSpec, "spec_path": "x.json", "input": list}}, "not both"},
		{map[string]any{"problem": map[string]any{"input": list}}, "give its spec"},
		{map[string]any{"problem": map[string]any{"spec": sortSpec}}, `missing properties: ["input"]`},
		{map[string]any{"problem": map[string]any{"spec": sortSpec, "input": map[string]any{"list": "3, 1"}}}, "does not fit the spec's schema"},
		{map[string]any{"problem": map[string]any{"spec": sortSpec, "input": list}, "sort": list}, "exactly one problem"},
		{map[string]any{"problem": map[string]any{"spec": deep, "input": list}}, "over this server's bound of 1000"},
		{map[string]any{"problem": map[string]any{"spec": noFamily, "input": map[string]any{"n": []int{1, 2}}}}, "names a built-in \"family\""},
		{map[string]any{"problem": map[string]any{"spec": sortSpec, "input": list}, "models": []string{"openai:gpt-4.1"}}, "openai:gpt-4.1"},
		{map[string]any{"problem": map[string]any{"spec": sortSpec, "input": list}, "base_url": "http://127.0.0.1:1/v1"}, "base_url"},
	} {
		toolError(t, call(t, ctx, c.ClientSession, "solve_problem", tc.args, nil), tc.want)
	}
}

// A spec without a checker or family runs on a real model the server
// allows (an OpenAI-compatible server on loopback): solved when it
// answers, and said to be unchecked.
func TestSolveProblemSpecWithoutCheckerIsUnchecked(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": `{"answer": 6}`}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(fake.Close)
	c, _ := connect(t, mcpserver.Config{State: t.TempDir(), Models: []string{"openai:fake"}, BaseURL: fake.URL})
	out := decode[mcpserver.SolveProblemOutput](t, call(t, context.Background(), c.ClientSession, "solve_problem",
		map[string]any{"problem": map[string]any{"spec": readSpec(t, "sum-spec.json"), "input": map[string]any{"n": []int{1, 5}}}}, nil))
	assert.True(t, out.Solved, out.Message)
	assert.False(t, out.Checked)
	assert.Contains(t, out.Message, "not checked")
	assert.Equal(t, 6.0, out.Answer)
	assert.Equal(t, "openai:fake@"+fake.URL, out.Model)
	assert.Equal(t, int64(out.Samples), calls.Load(), "every sample a call to the model")
}

// role_models gives roles models of their own, each checked as models
// are: the solver's calls go to its model, the other roles' to models;
// an unknown role, a model the server does not allow, and the simulated
// model in a role are refused.
func TestSolveProblemRoleModels(t *testing.T) {
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
	t.Cleanup(fake.Close)
	c, _ := connect(t, mcpserver.Config{State: t.TempDir(), Models: []string{"openai:fake", "openai:other"}, BaseURL: fake.URL})
	ctx := context.Background()
	// The input is atomic by its size: the solver alone is asked.
	problem := map[string]any{"spec": readSpec(t, "sum-spec.json"), "input": map[string]any{"n": []int{1, 5}}}
	for _, tc := range []struct {
		roles map[string]any
		want  string
	}{{map[string]any{"solve": []string{"openai:other"}}, "other"}, {map[string]any{"atomic": []string{"openai:other"}}, "fake"}} {
		mu.Lock()
		clear(asked)
		mu.Unlock()
		out := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem",
			map[string]any{"problem": problem, "models": []string{"openai:fake"}, "role_models": tc.roles}, nil))
		assert.True(t, out.Solved, out.Message)
		mu.Lock()
		assert.Equal(t, map[string]int{tc.want: out.Samples}, asked, "%v: every call to the solver's model", tc.roles)
		mu.Unlock()
		assert.Contains(t, out.RoleModels["solve"], "openai:"+tc.want)
		assert.Len(t, out.RoleModels, 5)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"problem": problem, "models": []string{"openai:fake"}, "role_models": map[string]any{"solver": []string{"openai:other"}}}, `role "solver"`},
		{map[string]any{"problem": problem, "models": []string{"openai:fake"}, "role_models": map[string]any{"solve": []string{"openai:gpt-4.1"}}}, "not one of this server's models"},
		{map[string]any{"problem": problem, "models": []string{"openai:fake"}, "role_models": map[string]any{"solve": []string{}}}, "give a model spec"},
	} {
		toolError(t, call(t, ctx, c.ClientSession, "solve_problem", tc.args, nil), tc.want)
	}
	c2, _ := connect(t, mcpserver.Config{State: t.TempDir(), Models: []string{"sim", "openai:other"}, BaseURL: fake.URL})
	toolError(t, call(t, ctx, c2.ClientSession, "solve_problem", map[string]any{"sort": map[string]any{"list": []int{2, 1}},
		"role_models": map[string]any{"solve": []string{"openai:other"}}}, nil), "every role or none")
	toolError(t, call(t, ctx, c2.ClientSession, "solve_problem", map[string]any{"problem": problem, "models": []string{"openai:other"},
		"role_models": map[string]any{"solve": []string{"sim"}}}, nil), "every role or none")

	// Every role given a real model of its own: the simulated model of
	// models plays none, which problems.RoleModels allows.
	every := map[string]any{}
	for _, r := range []string{"atomic", "decompose", "discriminate", "solve", "compose"} {
		every[r] = []string{"openai:other"}
	}
	out := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c2.ClientSession, "solve_problem", map[string]any{"problem": problem, "role_models": every}, nil))
	assert.True(t, out.Solved, out.Message)
	assert.Contains(t, out.RoleModels["solve"], "openai:other")
	assert.Equal(t, out.RoleModels["solve"], out.Model, "the model is the roles' own, not empty")
}
