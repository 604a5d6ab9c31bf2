//go:build unix

package fstools

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalize(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)

	in := intent.ToolIntent{Tool: "grep", Rationale: "look", Args: map[string]any{
		"pattern": "needle", "paths": `["sub"]`, "max_results": 2.0, "case_insensitive": "true",
	}}
	out, err := e.Normalize(in)
	require.NoError(t, err)
	assert.Equal(t, "grep", out.Tool)
	assert.Equal(t, "look", out.Rationale)
	assert.Equal(t, map[string]any{
		"pattern": "needle", "paths": []any{"sub"}, "max_results": json.Number("2"), "case_insensitive": true,
	}, out.Args)
	assert.Equal(t, `["sub"]`, in.Args["paths"], "the input is not changed")

	// No map is shared either way.
	out.Args["pattern"] = "changed"
	out.Args["paths"].([]any)[0] = "changed"
	assert.Equal(t, "needle", in.Args["pattern"])
	nested := map[string]any{"k": 1}
	tool := executor.NewTool("nested", categories.TaskManager, "", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) { return "", nil })
	open := newExec(t, "", executor.WithTools(tool), executor.WithPolicy(categories.Policy{Allow: []string{"nested"}}))
	out, err = open.Normalize(intent.ToolIntent{Tool: "nested", Args: map[string]any{"m": nested}})
	require.NoError(t, err)
	out.Args["m"].(map[string]any)["k"] = 2
	assert.Equal(t, 1, nested["k"])

	// Nil arguments become an empty object; the index tool is normalised too.
	out, err = e.Normalize(intent.ToolIntent{Tool: categories.IndexTool})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{}, out.Args)
}

func TestNormalizeInvalidArgs(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)
	for _, a := range []map[string]any{
		{"path": 42},
		{},
		{"path": "hello.txt", "offset": "first", "x": 1},
		{"path": "hello.txt", "limit": json.Number("1e30")},
		{"path": make(chan int)},
	} {
		in := intent.ToolIntent{Tool: "read_file", Args: a}
		out, err := e.Normalize(in)
		require.ErrorIs(t, err, executor.ErrInvalidArgs, "%v", a)
		assert.Zero(t, out)
		obs := run(t, e, "read_file", a)
		assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
		assert.Equal(t, obs.Content, err.Error(), "the same wording as the denial")
	}
}

func TestNormalizeLeavesWhatCannotRun(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)
	for _, in := range []intent.ToolIntent{
		{Tool: "no_such_tool", Args: map[string]any{"x": "[1]"}},
		{Tool: "run_command", Args: map[string]any{"command": 1}}, // known, unavailable
		{Tool: string(make([]byte, executor.MaxToolNameBytes+1)), Args: map[string]any{}},
	} {
		out, err := e.Normalize(in)
		require.NoError(t, err, in.Tool)
		assert.Equal(t, in, out)
	}
	// Withheld by the policy: healed, not validated, no error.
	out, err := e.Normalize(intent.ToolIntent{Tool: "write_file", Args: map[string]any{"path": "x", "create_dirs": "true", "extra": 2.0}})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"path": "x", "create_dirs": true, "extra": json.Number("2")}, out.Args)
	// Withheld and not even normalisable: unchanged.
	odd := intent.ToolIntent{Tool: "write_file", Args: map[string]any{"path": make(chan int)}}
	out, err = e.Normalize(odd)
	require.NoError(t, err)
	assert.Equal(t, odd.Tool, out.Tool)
}

// TestExecuteOfNormalizeIsExecute: for every hostile intent, and a few
// that heal, Execute(Normalize(x)) gives Execute(x)'s observation; when
// Normalize refuses x, Execute(x) is the matching denial.
func TestExecuteOfNormalizeIsExecute(t *testing.T) {
	f := newFixture(t)
	cases := hostileCases(t, f)
	ro := cases[0].e
	extra := []hostileCase{
		{name: "heal paths", e: ro, tool: "grep", args: map[string]any{"pattern": "needle", "paths": `["sub"]`}},
		{name: "heal ints", e: ro, tool: "read_file", args: map[string]any{"path": "hello.txt", "offset": "2", "limit": 1.0}},
		{name: "integral", e: ro, tool: "read_file", args: map[string]any{"path": "hello.txt", "offset": json.Number("2e0")}},
		{name: "index", e: ro, tool: categories.IndexTool, args: map[string]any{"verbose": "true"}},
	}
	for _, c := range append(cases, extra...) {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			in := intent.ToolIntent{Tool: c.tool, Args: c.args, Rationale: "why"}
			direct, err := c.e.Execute(ctx, in)
			require.NoError(t, err)
			norm, nerr := c.e.Normalize(in)
			if nerr != nil {
				require.ErrorIs(t, nerr, executor.ErrInvalidArgs)
				assert.Equal(t, intent.ReasonInvalidArgs, direct.Reason)
				assert.Equal(t, direct.Content, nerr.Error())
				return
			}
			assert.Equal(t, in.Tool, norm.Tool)
			assert.Equal(t, in.Rationale, norm.Rationale)
			via, err := c.e.Execute(ctx, norm)
			require.NoError(t, err)
			sameObservation(t, direct, via, c.name)
			again, err := c.e.Normalize(norm)
			require.NoError(t, err)
			assert.Equal(t, norm, again, "Normalize is idempotent")
		})
	}
}

// BenchmarkNormalize measures the cost the solver pays in every sample.
func BenchmarkNormalize(b *testing.B) {
	root := b.TempDir()
	e, err := New(root)
	require.NoError(b, err)
	defer e.Close()
	for _, c := range []struct {
		name string
		in   intent.ToolIntent
	}{
		{"read_file", intent.ToolIntent{Tool: "read_file", Args: map[string]any{"path": "src/main.go", "offset": json.Number("10"), "limit": json.Number("50")}}},
		{"grep_heal", intent.ToolIntent{Tool: "grep", Args: map[string]any{"pattern": "func [A-Z]", "paths": `["src","cmd"]`, "max_results": 2.0}}},
		{"unknown", intent.ToolIntent{Tool: "nope", Args: map[string]any{"x": 1}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, err := e.Normalize(c.in)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				_, _ = e.Normalize(c.in)
			}
		})
	}
}
