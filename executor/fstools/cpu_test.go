//go:build unix

package fstools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// settled waits up to 10 s for every goroutine not in before to end (one
// ending may take a while on a loaded machine; one left running never
// ends) and returns goleak's error naming those still running, or nil.
// Goroutines are told apart by identity, not counted: one of the call
// before still ending is in before, and cannot hide one of this call.
func settled(before goleak.Option) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := goleak.Find(before)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTimedOutBuiltinsLeaveNothingRunning gives each built-in tool work
// far longer than its timeout: a glob pattern that backtracks
// exponentially, a regular expression whose program is large over a long
// line, a path through a deep tree, a big file, a big folder, a big write.
// Each call returns soon after the timeout and leaves no goroutine behind.
func TestTimedOutBuiltinsLeaveNothingRunning(t *testing.T) {
	f := newFixture(t)
	deep := filepath.Join(append([]string{f.root, "deep"}, strings.Split(strings.Repeat("a/", 60), "/")...)...)
	require.NoError(t, os.MkdirAll(deep, 0o755))
	require.NoError(t, writeFile(filepath.Join(deep, "f.txt"), "x\n"))
	require.NoError(t, writeFile(filepath.Join(f.root, "long.txt"), strings.Repeat("x", 2<<20)))
	many := filepath.Join(f.root, "many")
	require.NoError(t, os.Mkdir(many, 0o755))
	for i := range 1000 {
		require.NoError(t, writeFile(filepath.Join(many, strings.Repeat("n", 100)+strconv.Itoa(i)), ""))
	}
	deepPath := "deep/" + strings.Repeat("a/", 60) + "f.txt"
	calls := []intent.ToolIntent{
		{Tool: "glob", Args: args{"pattern": strings.Repeat("**/a/", 14) + "b", "path": "deep"}},
		{Tool: "grep", Args: args{"pattern": "[^y]{0,900}y", "paths": []any{"long.txt"}}},
		{Tool: "grep", Args: args{"pattern": "x", "glob": strings.Repeat("**/a/", 14) + "b", "paths": []any{"deep"}}},
		{Tool: "read_file", Args: args{"path": deepPath}},
		{Tool: "read_file", Args: args{"path": "long.txt"}},
		{Tool: "list_dir", Args: args{"path": "many"}},
		{Tool: "write_file", Args: args{"path": "big.out", "content": strings.Repeat("w", 512<<10)}},
	}
	// With a timeout that has passed before the tool starts, every call
	// times out; with a short one, the work above is bounded anyway.
	for _, timeout := range []time.Duration{time.Nanosecond, 100 * time.Millisecond} {
		e := newExec(t, f.root, executor.WithPolicy(rwPolicy()), executor.WithTimeout(timeout), WithReadCap(16<<20))
		for _, in := range calls {
			t.Run(fmt.Sprint(in.Tool, "/", timeout), func(t *testing.T) {
				before := goleak.IgnoreCurrent()
				start := time.Now()
				obs, err := e.Execute(context.Background(), in)
				elapsed := time.Since(start)
				require.NoError(t, err)
				assert.Less(t, elapsed, timeout+raceSlowdown*2*time.Second, "returns soon after the timeout: %s", cutText(obs.Content, 200))
				assert.NotEqual(t, intent.ReasonPanic, obs.Reason, cutText(obs.Content, 200))
				if timeout == time.Nanosecond {
					assert.Equal(t, intent.ReasonTimeout, obs.Reason, cutText(obs.Content, 200))
				}
				assert.NoError(t, settled(before), "no goroutine of the call is left running")
			})
		}
	}
}

// TestGlobIsLinear: repeated ** against a deep name used to backtrack
// exponentially; the matcher now takes time linear in both.
func TestGlobIsLinear(t *testing.T) {
	start := time.Now()
	assert.False(t, matchGlob(strings.Repeat("**/a/", 40)+"b", strings.Repeat("a/", 400)+"c"))
	assert.True(t, matchGlob(strings.Repeat("**/a/", 40)+"c", strings.Repeat("a/", 400)+"c"))
	assert.Less(t, time.Since(start), raceSlowdown*time.Second)
}

// TestGrepBoundsItsMatcher: a pattern whose program is too large is
// refused before compiling; a long line is matched in a window whose size
// depends on the program, and the output says so.
func TestGrepBoundsItsMatcher(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)
	for _, p := range []string{`\w{1,1000}\w{1,1000}\w{1,1000}`, `(?:[a-z]{1,40}\d{1,40}){1,25}`, strings.Repeat("[a-z]{1,100}", 60)} {
		obs := run(t, e, "grep", args{"pattern": p})
		assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, "%.40s: %s", p, obs.Content)
		assert.Contains(t, obs.Content, "too large")
	}
	require.NoError(t, writeFile(filepath.Join(f.root, "wide.txt"), strings.Repeat("x", 600<<10)+"needle\nshort needle\n"))
	obs := run(t, e, "grep", args{"pattern": "needle", "paths": []any{"wide.txt"}})
	require.True(t, obs.OK(), obs.Content)
	assert.Contains(t, obs.Content, "wide.txt:2: short needle")
	assert.NotContains(t, obs.Content, "wide.txt:1:", "the needle past the window is not seen")
	assert.Contains(t, obs.Content, "1 line(s) longer than")
	assert.True(t, obs.Truncated)
	// A simple pattern gets a wide window: a needle 100 KiB into a line is found.
	require.NoError(t, writeFile(filepath.Join(f.root, "mid.txt"), strings.Repeat("x", 100<<10)+"needle\n"))
	assert.Contains(t, run(t, e, "grep", args{"pattern": "needle", "paths": []any{"mid.txt"}}).Content, "mid.txt:1: xxx")
	assert.Equal(t, minGrepWindow, lineWindow(maxRegexpInsts*1000))
	assert.Equal(t, grepLineBudget, lineWindow(1))
}

// TestAbandonedToolsAreBounded: a registered tool that ignores its
// context is abandoned after the timeout, but at most WithMaxAbandoned of
// them run on at once; further calls of such tools are refused without
// starting until one ends.
func TestAbandonedToolsAreBounded(t *testing.T) {
	var starts atomic.Int32
	release := make(chan struct{})
	var running sync.WaitGroup
	rude := executor.NewTool("rude", categories.Web, "", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) {
		running.Add(1)
		defer running.Done()
		if starts.Add(1) <= 2 {
			<-release // ignores its context
		}
		return "done", nil
	})
	e := newExec(t, "", executor.WithTools(rude), executor.WithTimeout(20*time.Millisecond), executor.WithMaxAbandoned(2),
		executor.WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	for range 2 {
		assert.Equal(t, intent.ReasonTimeout, run(t, e, "rude", nil).Reason)
	}
	obs := run(t, e, "rude", nil)
	assert.Equal(t, intent.StatusError, obs.Status)
	assert.Equal(t, intent.ReasonToolError, obs.Reason)
	assert.Contains(t, obs.Content, "2 earlier calls")
	assert.Contains(t, obs.Content, "not started")
	assert.Equal(t, int32(2), starts.Load(), "the refused call did not start")

	close(release)
	running.Wait()
	require.Eventually(t, func() bool { return run(t, e, "rude", nil).OK() }, 2*time.Second, 5*time.Millisecond,
		"once the abandoned calls end, calls run again")
	assert.Equal(t, int32(3), starts.Load())
}

// TestEstimateInstsIsAnUpperBound: the estimate that gates compiling is
// never below the real program's size (bar the program's fixed prologue).
func TestEstimateInstsIsAnUpperBound(t *testing.T) {
	for _, p := range []string{
		`needle`, `(?i)needle`, `a|b|c`, `(a|bc)*d+e?`, `x{2,5}`, `x{3,}`, `(?:ab){0,7}`, `^\bfoo$`, `[a-z]{1,100}`,
		`(?:[a-z]{1,40}\d{1,40}){1,25}`, `((a)(b(c)))`, `(?s).*`, `\p{Greek}+`, `(?:a{2}b{3}){4}`, ``,
	} {
		parsed, err := syntax.Parse(p, syntax.Perl)
		require.NoError(t, err, p)
		prog, err := syntax.Compile(parsed.Simplify())
		require.NoError(t, err, p)
		assert.GreaterOrEqual(t, estimateInsts(parsed)+4, len(prog.Inst), p)
	}
}

// TestDeepPathIsBounded: a path at MaxPathDepth through real folders
// resolves in bounded time; one more component is refused before any
// file-system call.
func TestDeepPathIsBounded(t *testing.T) {
	root := t.TempDir()
	rel := strings.Repeat("d/", executor.MaxPathDepth-1)
	require.NoError(t, os.MkdirAll(filepath.Join(root, rel), 0o755))
	require.NoError(t, writeFile(filepath.Join(root, rel, "f.txt"), "deep\n"))
	e := newExec(t, root)
	start := time.Now()
	assert.Equal(t, "deep\n", run(t, e, "read_file", args{"path": rel + "f.txt"}).Content)
	assert.Less(t, time.Since(start), raceSlowdown*2*time.Second)
	assert.Equal(t, intent.ReasonBadPath, run(t, e, "read_file", args{"path": rel + "d/f.txt"}).Reason)
}
