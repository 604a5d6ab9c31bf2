//go:build unix

package fstools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadFileHugeLimit: a limit near the int range used to overflow an
// index and end as a panic observation.
func TestReadFileHugeLimit(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)
	for _, limit := range []any{math.MaxInt64, json.Number("9223372036854775807"), json.Number("1e30"), 1 << 40} {
		obs := run(t, e, "read_file", args{"path": "hello.txt", "offset": 2, "limit": limit})
		assert.Equal(t, intent.StatusDenied, obs.Status, "%v: %s", limit, obs.Content)
		assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, "%v: %s", limit, obs.Content)
		assert.Contains(t, obs.Content, "arguments.limit: maximum", "%v", limit)
	}
	obs := run(t, e, "read_file", args{"path": "hello.txt", "offset": 1_000_000_000, "limit": 1_000_000})
	assert.True(t, obs.OK(), obs.Content)
	assert.Contains(t, obs.Content, "past the end")
	obs = run(t, e, "read_file", args{"path": "hello.txt", "offset": 1_000_000_001})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)

	// The tool itself does not overflow, whatever reaches it.
	rf := fileTool(t, f.root, "read_file")
	huge := json.Number("9223372036854775807")
	out, err := rf.Run(context.Background(), args{"path": "hello.txt", "offset": json.Number("2"), "limit": huge})
	require.NoError(t, err)
	assert.Equal(t, "world\n", out)
	out, err = rf.Run(context.Background(), args{"path": "hello.txt", "offset": huge, "limit": huge})
	require.NoError(t, err)
	assert.Contains(t, out, "past the end")
}

// TestDenialsAreCapped: no denial, however absurd the call, carries more
// than the output cap (plus its note), and the name it echoes is cut.
func TestDenialsAreCapped(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)

	huge := strings.Repeat("x", 1<<20)
	obs := run(t, e, huge, nil)
	assert.Equal(t, intent.ReasonUnknownTool, obs.Reason)
	assert.LessOrEqual(t, len(obs.Content), executor.DefaultOutputCap+noteSlack)
	assert.LessOrEqual(t, len(obs.Tool), executor.MaxToolNameBytes+len("…"), "the observation does not echo a huge name whole")
	assert.Contains(t, obs.Content, "1048576 bytes")

	many := args{}
	for i := range 5000 {
		many[fmt.Sprintf("unknown_argument_%04d", i)] = strings.Repeat("v", 100)
	}
	obs = run(t, e, "read_file", many)
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	assert.LessOrEqual(t, len(obs.Content), executor.DefaultOutputCap+noteSlack)
	assert.Contains(t, obs.Content, "5000 arguments")

	// Fewer arguments than the limit, but with long names: one problem line
	// naming them all is cut.
	long := args{"path": "hello.txt"}
	for i := range executor.MaxArgs - 1 {
		long[fmt.Sprintf("%s_%02d", strings.Repeat("k", 2000), i)] = 1
	}
	obs = run(t, e, "read_file", long)
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	assert.Less(t, len(obs.Content), 2000, obs.Content)
	assert.Contains(t, obs.Content, "additional properties")

	// Many problems: the first MaxProblems are listed, then a count.
	paths := make([]any, 100)
	for i := range paths {
		paths[i] = i
	}
	obs = run(t, e, "grep", args{"pattern": "x", "paths": paths})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	assert.Equal(t, executor.MaxProblems, strings.Count(obs.Content, "\n- arguments.paths["), obs.Content)
	assert.Contains(t, obs.Content, "100 problems")
	assert.Contains(t, obs.Content, "and 80 more")

	// A small cap holds for denials too.
	small := newExec(t, f.root, executor.WithOutputCap(40))
	for _, in := range []intent.ToolIntent{
		{Tool: "no_such_tool"},
		{Tool: "write_file", Args: args{"path": "x", "content": "y"}},
		{Tool: "read_file", Args: args{"path": 1}},
		{Tool: "read_file", Args: args{"path": "../outside/secret.txt"}},
	} {
		obs, err := small.Execute(context.Background(), in)
		require.NoError(t, err)
		assert.True(t, obs.Denied(), obs.Content)
		assert.LessOrEqual(t, len(obs.Content), 40+noteSlack, obs.Content)
		assert.True(t, obs.Truncated, obs.Content)
	}
}

// TestInputBounds: each input limit, exceeded by a little, gives a denial
// that names the limit.
func TestInputBounds(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root, executor.WithPolicy(rwPolicy()))
	nested := any("leaf")
	for range executor.MaxArgsDepth + 1 {
		nested = []any{nested}
	}
	tooMany := args{}
	for i := range executor.MaxArgs + 1 {
		tooMany[fmt.Sprint("a", i)] = i
	}
	cases := []struct {
		name   string
		tool   string
		args   args
		reason intent.Reason
		words  []string
	}{
		{"tool name", strings.Repeat("n", executor.MaxToolNameBytes+1), nil, intent.ReasonUnknownTool, []string{"257 bytes", "at most 256"}},
		{"arguments", "read_file", tooMany, intent.ReasonInvalidArgs, []string{"65 arguments", "at most 64"}},
		{"depth", "write_file", args{"path": "x", "content": "y", "z": nested}, intent.ReasonInvalidArgs, []string{"nested more than 32"}},
		{"encoded size", "write_file", args{"path": "x", "content": strings.Repeat("y", executor.DefaultArgsCap)}, intent.ReasonInvalidArgs, []string{"bytes as JSON", "at most 4194304"}},
		{"path length schema", "read_file", args{"path": strings.Repeat("p", executor.MaxPathBytes+1)}, intent.ReasonInvalidArgs, []string{"maxLength: got 4,097, want 4,096"}},
		{"path bytes", "read_file", args{"path": strings.Repeat("€", 1400)}, intent.ReasonBadPath, []string{"4200 bytes", "at most 4096"}},
		{"path depth", "read_file", args{"path": strings.Repeat("a/", executor.MaxPathDepth) + "b"}, intent.ReasonBadPath, []string{"257 components", "at most 256"}},
		{"list dir path", "list_dir", args{"path": strings.Repeat("p", executor.MaxPathBytes+1)}, intent.ReasonInvalidArgs, []string{"maxLength"}},
		{"glob path", "glob", args{"pattern": "*", "path": strings.Repeat("p", executor.MaxPathBytes+1)}, intent.ReasonInvalidArgs, []string{"maxLength"}},
		{"glob pattern", "glob", args{"pattern": strings.Repeat("*", 1001)}, intent.ReasonInvalidArgs, []string{"maxLength"}},
		{"grep paths", "grep", args{"pattern": "x", "paths": make([]any, 101)}, intent.ReasonInvalidArgs, []string{"maxItems: got 101, want 100"}},
		{"grep path", "grep", args{"pattern": "x", "paths": []any{strings.Repeat("p", executor.MaxPathBytes+1)}}, intent.ReasonInvalidArgs, []string{"maxLength"}},
		{"grep pattern", "grep", args{"pattern": strings.Repeat("x", 1001)}, intent.ReasonInvalidArgs, []string{"maxLength"}},
		{"write path", "write_file", args{"path": strings.Repeat("p", executor.MaxPathBytes+1), "content": ""}, intent.ReasonInvalidArgs, []string{"maxLength"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obs := run(t, e, c.tool, c.args)
			assert.Equal(t, intent.StatusDenied, obs.Status, obs.Content)
			assert.Equal(t, c.reason, obs.Reason, obs.Content)
			for _, w := range c.words {
				assert.Contains(t, obs.Content, w)
			}
			assert.LessOrEqual(t, len(obs.Content), 2000, "a bound's denial is short")
		})
	}
	// At the limits, the calls are not refused for their size.
	atLimit := args{}
	for i := range executor.MaxArgs {
		atLimit[fmt.Sprint("a", i)] = i
	}
	nested = "leaf"
	for range executor.MaxArgsDepth - 1 {
		nested = []any{nested}
	}
	counter := executor.NewTool("counter", categories.TaskManager, "", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) { return "ran", nil })
	open := newExec(t, "", executor.WithTools(counter), executor.WithPolicy(categories.Policy{Allow: []string{"counter"}}))
	assert.Equal(t, "ran", run(t, open, "counter", atLimit).Content)
	assert.Equal(t, "ran", run(t, open, "counter", args{"n": nested}).Content)
	assert.Equal(t, intent.ReasonNotFound, run(t, e, "read_file", args{"path": strings.Repeat("a/", executor.MaxPathDepth-1) + "b"}).Reason)
}

// TestManyValuesAreCheap: an argument list of many values used to make
// the denial quadratic (minutes for 200k items). Beyond MaxArgValues the
// call is refused before validation; below it, many problems stay cheap.
func TestManyValuesAreCheap(t *testing.T) {
	e := newExec(t, t.TempDir())
	list := func(n int) []any {
		l := make([]any, n)
		for i := range l {
			l[i] = i
		}
		return l
	}
	// CPU time, not wall time: a loaded machine stretches the wall clock
	// of a bounded check past any fixed limit, not its CPU.
	start := processCPU(t)
	obs := run(t, e, "grep", args{"pattern": "x", "paths": list(200_000)})
	assert.Less(t, processCPU(t)-start, raceSlowdown*2*time.Second)
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	assert.Contains(t, obs.Content, "more than 10000 values")

	start = processCPU(t)
	obs = run(t, e, "grep", args{"pattern": "x", "paths": list(executor.MaxArgValues - 10)})
	assert.Less(t, processCPU(t)-start, raceSlowdown*2*time.Second)
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	assert.Contains(t, obs.Content, "\n- arguments.paths: maxItems: got 9,990, want 100\n- arguments.paths[0]: got number, want string\n- arguments.paths[1]:",
		"a parent's problem first, then items by position")
	assert.Equal(t, executor.MaxProblems-1, strings.Count(obs.Content, "\n- arguments.paths["), cutText(obs.Content, 500))
}

// TestProblemsAreDeterministic: the same invalid call gives the same
// denial every time, although the validator walks objects in map order.
func TestProblemsAreDeterministic(t *testing.T) {
	e := newExec(t, t.TempDir())
	a := args{"pattern": 1, "glob": 2, "max_results": "x", "case_insensitive": 3}
	for i := range 40 {
		a[fmt.Sprintf("extra_%02d", i)] = i
	}
	first := run(t, e, "grep", a).Content
	for range 20 {
		assert.Equal(t, first, run(t, e, "grep", a).Content)
	}
	assert.Contains(t, first, "additional properties 'extra_00', 'extra_01', 'extra_02'")
}

// processCPU is the CPU time the process has used (user and system, all
// threads).
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
