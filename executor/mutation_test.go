package executor

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/intent"
)

// TestReadFileOfExactlyTheCap: a file of exactly the read cap is read
// whole, not truncated (builtin_read.go:118, the cap's boundary); one byte
// more is truncated.
func TestReadFileOfExactlyTheCap(t *testing.T) {
	root := t.TempDir()
	const readCap = 1 << 10
	line := strings.Repeat("x", 63) + "\n" // 64 bytes
	require.NoError(t, writeFile(filepath.Join(root, "exact.txt"), strings.Repeat(line, readCap/64)))
	require.NoError(t, writeFile(filepath.Join(root, "over.txt"), strings.Repeat(line, readCap/64)+"y"))
	e := newExec(t, root, WithReadCap(readCap))

	obs := run(t, e, "read_file", args{"path": "exact.txt", "limit": 1000})
	require.True(t, obs.OK(), obs.Content)
	assert.False(t, obs.Truncated, "exactly the cap is the whole file")
	assert.Equal(t, strings.Repeat(line, readCap/64), obs.Content)

	obs = run(t, e, "read_file", args{"path": "over.txt", "limit": 1000})
	require.True(t, obs.OK(), obs.Content)
	assert.True(t, obs.Truncated, "one byte past the cap")
}

// TestReadFileLeadingNULIsBinary: a file whose first byte is NUL is
// binary (builtin_read.go:123, the NUL's index compared with 0).
func TestReadFileLeadingNULIsBinary(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "nul.dat"), "\x00text after a NUL\n"))
	e := newExec(t, root, WithReadCap(4<<10))
	obs := run(t, e, "read_file", args{"path": "nul.dat"})
	require.True(t, obs.OK(), obs.Content)
	assert.Contains(t, obs.Content, "nul.dat is a binary file (18 bytes)")
}

// TestReadFileOffsetJustPastTheEnd: an offset one past the last line is
// past the end, said so, not an empty read (builtin_read.go:135).
func TestReadFileOffsetJustPastTheEnd(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "two.txt"), "a\nb\n"))
	e := newExec(t, root, WithReadCap(4<<10))
	assert.Equal(t, "b\n", run(t, e, "read_file", args{"path": "two.txt", "offset": 2}).Content)
	assert.Equal(t, "[two.txt has 2 lines; offset 3 is past the end]", run(t, e, "read_file", args{"path": "two.txt", "offset": 3}).Content)
}

// TestReadCappedReadsAtMostN: readCapped reads at most n bytes, also
// when n spans several chunks (builtin_read.go:169, the chunk's size).
func TestReadCappedReadsAtMostN(t *testing.T) {
	for _, n := range []int64{1, readChunk - 1, readChunk, readChunk + 10, 2*readChunk + 3} {
		src := strings.NewReader(strings.Repeat("z", 3*readChunk))
		data, err := readCapped(context.Background(), src, n)
		require.NoError(t, err, "n %d", n)
		assert.Len(t, data, int(n))
	}
	data, err := readCapped(context.Background(), strings.NewReader("short"), readChunk+10)
	require.NoError(t, err)
	assert.Equal(t, "short", string(data))
}

// TestGlobCapsItsMatches: past maxListEntries matches glob stops, shows
// the first ones and says it was truncated (builtin_search.go:90, the
// match count; :99, the stop is not an error); under the cap nothing is
// marked truncated (:106).
func TestGlobCapsItsMatches(t *testing.T) {
	root := t.TempDir()
	for i := range maxListEntries + 1 {
		require.NoError(t, writeFile(filepath.Join(root, fmt.Sprintf("f%04d.txt", i)), ""))
	}
	require.NoError(t, writeFile(filepath.Join(root, "one.go"), ""))
	e := newExec(t, root, WithReadCap(4<<10))

	obs := run(t, e, "glob", args{"pattern": "*.txt"})
	require.True(t, obs.OK(), obs.Content)
	assert.True(t, obs.Truncated)
	assert.Equal(t, maxListEntries, strings.Count(obs.Content, ".txt\n"))
	assert.Contains(t, obs.Content, fmt.Sprintf("[truncated: only the first %d matches are shown]", maxListEntries))

	obs = run(t, e, "glob", args{"pattern": "*.go"})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "one.go\n", obs.Content)
	assert.False(t, obs.Truncated)
}

// TestGlobInAMissingFolder: a path that does not exist is an error naming
// it (builtin_search.go:120, dirPath's Stat error).
func TestGlobInAMissingFolder(t *testing.T) {
	e := newExec(t, t.TempDir(), WithReadCap(4<<10))
	obs := run(t, e, "glob", args{"pattern": "*", "path": "nowhere"})
	assert.False(t, obs.OK())
	assert.Contains(t, obs.Content, "nowhere")
	assert.NotContains(t, obs.Content, "panic")
}

// TestGlobStopsAfterMaxWalkEntries: a walk visits at most maxWalkEntries
// entries, the folder itself counted: a folder holding maxWalkEntries-1
// files is walked whole, one file more stops the walk and says so
// (builtin_search.go:78, the visit count and its bound). Seconds of file
// creation: skipped with -short.
func TestGlobStopsAfterMaxWalkEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 100,000 files")
	}
	root := t.TempDir()
	for i := range maxWalkEntries - 1 {
		f, err := os.Create(filepath.Join(root, fmt.Sprintf("f%06d", i)))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	e := newExec(t, root, WithReadCap(4<<10))
	obs := run(t, e, "glob", args{"pattern": "*.none"})
	require.True(t, obs.OK(), obs.Content)
	assert.False(t, obs.Truncated, "exactly maxWalkEntries visits, the folder included")
	assert.Contains(t, obs.Content, "no path under . matches")

	require.NoError(t, writeFile(filepath.Join(root, "one-more"), ""))
	obs = run(t, e, "glob", args{"pattern": "*.none"})
	require.True(t, obs.OK(), obs.Content)
	assert.True(t, obs.Truncated)
	assert.Contains(t, obs.Content, fmt.Sprintf("[truncated: stopped after visiting %d entries]", maxWalkEntries))
}

// TestRootResolvesSymbolicLinks: a root given through a symbolic link is
// reported by Root with the link resolved, as documented (executor.go:104,
// EvalSymlinks after a successful Abs).
func TestRootResolvesSymbolicLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(real, link))
	want, err := filepath.EvalSymlinks(real)
	require.NoError(t, err)
	ex, err := New(link)
	require.NoError(t, err)
	defer ex.Close()
	assert.Equal(t, want, ex.Root())
}

// TestToolNameOfExactlyTheMaximumIsLookedUp: a tool name of
// MaxToolNameBytes is looked up and named whole in the denial; only a
// longer one is refused for its length (executor.go:225).
func TestToolNameOfExactlyTheMaximumIsLookedUp(t *testing.T) {
	ex, err := New("")
	require.NoError(t, err)
	defer ex.Close()
	name := strings.Repeat("x", MaxToolNameBytes)
	obs, ok := ex.Check(intent.ToolIntent{Tool: name})
	require.False(t, ok)
	assert.Equal(t, name, obs.Tool)
	assert.Contains(t, obs.Content, fmt.Sprintf("there is no tool named %q.", name))
	assert.NotContains(t, obs.Content, "tool names are at most")

	obs, ok = ex.Check(intent.ToolIntent{Tool: name + "x"})
	require.False(t, ok)
	assert.Contains(t, obs.Content, fmt.Sprintf("a name of %d bytes; tool names are at most %d bytes", MaxToolNameBytes+1, MaxToolNameBytes))
}

// TestUnknownToolMentionsWithheldToolsOnlyIfAny: the denial of an unknown
// tool says other tools are withheld only when the policy withholds some
// (executor.go:271: every registered tool loaded, none withheld).
func TestUnknownToolMentionsWithheldToolsOnlyIfAny(t *testing.T) {
	ex, err := New("")
	require.NoError(t, err)
	defer ex.Close()
	require.Len(t, ex.Loaded(), len(ex.Registered())+1, "every registered tool is loaded, besides the index")
	obs, ok := ex.Check(intent.ToolIntent{Tool: "nope"})
	require.False(t, ok)
	assert.Contains(t, obs.Content, "Tools you can call: ")
	assert.NotContains(t, obs.Content, "withheld")
}

// TestCallFinishedDespiteCancelIsOK: a call whose context is cancelled
// while it runs, but which returns its output without an error, is a
// finished call, not a cancelled one (executor.go:314: cancelled only
// with an error or a panic).
func TestCallFinishedDespiteCancelIsOK(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tool := NewTool("finish", categories.Search, "finishes", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) {
		cancel()
		return "done", nil
	})
	e := newExec(t, "", WithTools(tool))
	obs, err := e.Execute(ctx, intent.ToolIntent{Tool: "finish", Args: map[string]any{}})
	require.NoError(t, err)
	assert.Equal(t, intent.StatusOK, obs.Status, "%+v", obs)
	assert.Equal(t, "done", obs.Content)
}

// TestTimedOutToolErrorIsATimeout: a goroutine tool that stops at its
// timeout with an error of its own (one that does not wrap
// context.DeadlineExceeded) is a timeout, its error wrapping ErrTimeout
// (executor.go:377, the three parts of the wrapping's condition: an error,
// no panic, the caller's context still alive).
func TestTimedOutToolErrorIsATimeout(t *testing.T) {
	stubborn := NewTool("stubborn", categories.Web, "", json.RawMessage(`{"type":"object"}`), func(ctx context.Context, _ map[string]any) (string, error) {
		<-ctx.Done()
		return "", errors.New("gave up waiting for the server")
	})
	e := newExec(t, "", WithTools(stubborn), WithTimeout(20*time.Millisecond),
		WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	obs := run(t, e, "stubborn", nil)
	assert.Equal(t, intent.StatusError, obs.Status)
	assert.Equal(t, intent.ReasonTimeout, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, "did not finish within 20ms")
	assert.ErrorIs(t, ObservationError(obs), ErrTimeout)
}

// TestOutputCutWithNoRuneStart: a tool's output that is over the cap and
// has no UTF-8 rune start before the cut (continuation bytes only) is cut
// to nothing plus the note, without reading before the string's start
// (executor.go:429, capText's backward search stopping at 0; the mutant
// indexes s[-1] and panics).
func TestOutputCutWithNoRuneStart(t *testing.T) {
	const outCap = 100
	junk := NewTool("junk", categories.Web, "", json.RawMessage(`{"type":"object"}`), func(context.Context, map[string]any) (string, error) {
		return strings.Repeat("\x80", outCap+10), nil
	})
	e := newExec(t, "", WithTools(junk), WithOutputCap(outCap),
		WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	obs := run(t, e, "junk", nil)
	assert.True(t, obs.Truncated)
	assert.Equal(t, "\n[output truncated: showing the first 0 of 110 bytes]", obs.Content)
}

// TestNotesGoOnALineOfTheirOwn: a note follows text on a new line, and
// stands alone when there is no text (executor.go:440, appendNote's
// test of an empty text); read_file's truncation note after a file with
// no newline is on a line of its own.
func TestNotesGoOnALineOfTheirOwn(t *testing.T) {
	assert.Equal(t, "[note]", appendNote("", "[note]"))
	assert.Equal(t, "text\n[note]", appendNote("text", "[note]"))
	assert.Equal(t, "text\n[note]", appendNote("text\n", "[note]"))

	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "long.txt"), strings.Repeat("x", 2000)))
	e := newExec(t, root, WithReadCap(1<<10))
	obs := run(t, e, "read_file", args{"path": "long.txt"})
	require.True(t, obs.OK(), obs.Content)
	assert.True(t, strings.HasPrefix(obs.Content, strings.Repeat("x", 1<<10)+"\n[truncated: long.txt is 2000 bytes"), obs.Content)
}

// TestLinkTargetOfTooManyComponentsIsRefused: a path that takes more
// than maxResolveSteps components to resolve (here a link whose target is
// "." over and over, which leaves the depth and the link count alone) is
// refused for it, and one of exactly maxResolveSteps is followed
// (sandbox.go:127, the step counter and its boundary).
func TestLinkTargetOfTooManyComponentsIsRefused(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "x"), "content\n"))
	// The link's own name, then the target's components: k dots and "x".
	dots := func(k int) string { return strings.Repeat("./", k) + "x" }
	require.NoError(t, os.Symlink(dots(maxResolveSteps-2), filepath.Join(root, "exact")))
	require.NoError(t, os.Symlink(dots(maxResolveSteps-1), filepath.Join(root, "over")))
	e := newExec(t, root)
	obs := run(t, e, "read_file", args{"path": "over"})
	assert.Equal(t, intent.StatusDenied, obs.Status, obs.Content)
	assert.ErrorIs(t, ObservationError(obs), ErrInvalidPath)
	assert.Contains(t, obs.Content, fmt.Sprintf("\"over\" has more than %d components once its symbolic links are followed", maxResolveSteps))
	assert.Equal(t, "content\n", run(t, e, "read_file", args{"path": "exact"}).Content)
}

// TestLinkChainOfMaxSymlinksIsFollowed: a chain of maxSymlinks links is
// followed, one more is refused for the links, not for what os.Root
// would say (sandbox.go:157, the link counter and its boundary).
func TestLinkChainOfMaxSymlinksIsFollowed(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "x"), "content\n"))
	// l1 -> l2 -> ... -> l9 -> x: from l2 on, a chain of 8 links.
	for i := 1; i <= maxSymlinks+1; i++ {
		target := fmt.Sprintf("l%d", i+1)
		if i == maxSymlinks+1 {
			target = "x"
		}
		require.NoError(t, os.Symlink(target, filepath.Join(root, fmt.Sprintf("l%d", i))))
	}
	e := newExec(t, root)
	assert.Equal(t, "content\n", run(t, e, "read_file", args{"path": "l2"}).Content)
	obs := run(t, e, "read_file", args{"path": "l1"})
	assert.ErrorIs(t, ObservationError(obs), ErrInvalidPath, obs.Content)
	assert.Contains(t, obs.Content, fmt.Sprintf("\"l1\" goes through more than %d symbolic links", maxSymlinks))
}

// TestLinkBackUpReachesTheRightFolder: after a ".." in a link's target,
// the next component is looked up in the folder the ".." leads to (the
// root, or a folder below it), so a link found there is checked by
// resolve, here refused as absolute with resolve's own words
// (sandbox.go:207, reopen's case of the root).
func TestLinkBackUpReachesTheRightFolder(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d", "sub"), 0o755))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(root, "abs")))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(root, "d", "abs")))
	require.NoError(t, os.Symlink("../abs", filepath.Join(root, "d", "up")))         // ".." to the root
	require.NoError(t, os.Symlink("sub/../abs", filepath.Join(root, "d", "across"))) // ".." to d
	e := newExec(t, root)
	for _, p := range []string{"d/up", "d/across"} {
		obs := run(t, e, "read_file", args{"path": p})
		assert.ErrorIs(t, ObservationError(obs), ErrOutsideRoot, "%s: %s", p, obs.Content)
		assert.Contains(t, obs.Content, "to an absolute path; only relative links that stay inside the root folder are followed", p)
	}
}

// TestLinkTargetDeeperThanMaxPathDepthIsRefused: a link whose target is
// MaxPathDepth+1 folders deep is refused as too deep, as a path of that
// depth given by the model is; MaxPathDepth is followed, also with a "."
// after it (sandbox.go:130, the depth's boundary; a target of exactly
// MaxPathDepth+1 components, the last one, used to pass resolve).
func TestLinkTargetDeeperThanMaxPathDepthIsRefused(t *testing.T) {
	root := t.TempDir()
	deep := func(n int) string { return strings.TrimSuffix(strings.Repeat("a/", n), "/") }
	require.NoError(t, os.Symlink(deep(MaxPathDepth), filepath.Join(root, "max")))
	require.NoError(t, os.Symlink(deep(MaxPathDepth)+"/.", filepath.Join(root, "maxdot")))
	require.NoError(t, os.Symlink(deep(MaxPathDepth+1), filepath.Join(root, "over")))
	e := newExec(t, root)
	for _, p := range []string{"max", "maxdot"} {
		obs := run(t, e, "read_file", args{"path": p})
		assert.Equal(t, intent.ReasonNotFound, obs.Reason, "%s: %s", p, obs.Content)
	}
	obs := run(t, e, "read_file", args{"path": "over"})
	assert.ErrorIs(t, ObservationError(obs), ErrInvalidPath, obs.Content)
	assert.Contains(t, obs.Content, fmt.Sprintf("\"over\" is more than %d folders deep once its symbolic links are followed", MaxPathDepth))
	// As the model's own path of that depth is.
	assert.ErrorIs(t, ObservationError(run(t, e, "read_file", args{"path": deep(MaxPathDepth + 1)})), ErrInvalidPath)
}

// TestHealedArgumentsOfTheCapAreMeasuredAgain: healing can lengthen the
// arguments ("1e20" for an integer becomes 100000000000000000000, 15
// bytes more), so healed arguments are measured again against
// DefaultArgsCap: exactly the cap passes, one byte over is refused though
// the call as sent was under it (validate.go:92 and :93: the second
// measure taken when values were healed, its error test and its boundary).
func TestHealedArgumentsOfTheCapAreMeasuredAgain(t *testing.T) {
	tool := NewTool("sized", categories.Web, "", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"pad":{"type":"string"}}}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, "", WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	// padded returns arguments whose healed form is exactly size bytes.
	padded := func(size int) args {
		healed, err := json.Marshal(args{"n": json.Number("100000000000000000000"), "pad": ""})
		require.NoError(t, err)
		return args{"n": "1e20", "pad": strings.Repeat("x", size-len(healed))}
	}
	for _, c := range []struct {
		size int
		ok   bool
	}{{DefaultArgsCap, true}, {DefaultArgsCap + 1, false}} {
		a := padded(c.size)
		sent, err := json.Marshal(a)
		require.NoError(t, err)
		require.LessOrEqual(t, len(sent), DefaultArgsCap, "the call as sent is under the cap")
		obs := run(t, e, "sized", a)
		if c.ok {
			assert.Equal(t, "ran", obs.Content, "healed to %d bytes", c.size)
			assert.Equal(t, []string{"arguments.n"}, obs.Healed)
		} else {
			assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, "healed to %d bytes", c.size)
			assert.Contains(t, obs.Content, fmt.Sprintf("arguments: %d bytes as JSON; a call takes at most %d", c.size, DefaultArgsCap))
		}
	}
}

// TestArgumentsOfExactlyMaxArgValues: a call of exactly MaxArgValues
// values (the arguments object counted) runs; one more value is refused
// (validate.go:100, the count's boundary).
func TestArgumentsOfExactlyMaxArgValues(t *testing.T) {
	tool := NewTool("many", categories.Web, "", json.RawMessage(`{"type":"object"}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, "", WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	list := func(n int) []any {
		l := make([]any, n)
		for i := range l {
			l[i] = i
		}
		return l
	}
	// The object, the array and its items.
	assert.Equal(t, "ran", run(t, e, "many", args{"a": list(MaxArgValues - 2)}).Content)
	obs := run(t, e, "many", args{"a": list(MaxArgValues - 1)})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, fmt.Sprintf("more than %d values", MaxArgValues))
}

// TestInvalidArgumentsDenialOrderAndSummary: an invalid-arguments denial
// lists the arguments object's own problem before its properties', array
// indexes in numeric order ([2] before [10], also when the library gives
// them the other way round), at one location the
// library's keyword order (both minLength problems, by message, before
// the pattern's, though the schema puts the pattern between them), and
// the summary names a property with no type and not required by its name
// alone (validate.go:204, :224, :225, :229, the order's comparisons;
// :319 and :327, the summary's empty attribute lists).
func TestInvalidArgumentsDenialOrderAndSummary(t *testing.T) {
	tool := NewTool("v", categories.Web, "", json.RawMessage(`{"type":"object","required":["need"],"properties":{
	  "s":{"type":"string","allOf":[{"minLength":5},{"pattern":"^x"},{"minLength":6}]},
	  "a":{"type":"array","items":{"type":"integer"}},
	  "b":{"type":"array","allOf":[{"items":{"type":"integer"}},{"items":{"maximum":5}}]},
	  "any":{}, "need":{"type":"string"}}}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, "", WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	l := make([]any, 11)
	for i := range l {
		l[i] = 1
	}
	l[2], l[10] = "two", "ten"
	// b's problems come from the library as [10] (its first allOf), then [2].
	m := slices.Clone(l)
	m[2] = 9
	obs := run(t, e, "v", args{"s": "abc", "a": l, "b": m})
	assert.Equal(t, `invalid arguments for v (8 problems); nothing ran:
- arguments: missing property 'need'
- arguments.a[2]: got string, want integer
- arguments.a[10]: got string, want integer
- arguments.b[2]: maximum: got 9, want 5
- arguments.b[10]: got string, want integer
- arguments.s: minLength: got 3, want 5
- arguments.s: minLength: got 3, want 6
- arguments.s: 'abc' does not match pattern '^x'
v takes need (string, required), a (array), any, b (array), s (string).`, obs.Content)
}

// TestCutTextOnARuneBoundary: cutText keeps a text of exactly n bytes,
// cuts a longer one back to the rune start at or before n, never past n
// nor inside a rune, and cuts text with no rune start before n to nothing
// (validate.go:275, :279, :280).
func TestCutTextOnARuneBoundary(t *testing.T) {
	assert.Equal(t, "abcd", cutText("abcd", 4))
	assert.Equal(t, "abc…", cutText("abcde", 3))
	assert.Equal(t, "a…", cutText("aéb", 2), "é is bytes 1 and 2: cut before it")
	assert.Equal(t, "aé…", cutText("aébc", 3))
	assert.Equal(t, "…", cutText("\x80\x80\x80", 2))
}

// TestArgumentsOfExactlyTheCap: a call whose arguments are exactly
// DefaultArgsCap bytes as JSON runs; one byte more is refused
// (heal.go:148, normalise's boundary).
func TestArgumentsOfExactlyTheCap(t *testing.T) {
	tool := NewTool("sized", categories.Web, "", json.RawMessage(`{"type":"object"}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, "", WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	empty := len(`{"pad":""}`)
	assert.Equal(t, "ran", run(t, e, "sized", args{"pad": strings.Repeat("x", DefaultArgsCap-empty)}).Content)
	obs := run(t, e, "sized", args{"pad": strings.Repeat("x", DefaultArgsCap-empty+1)})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, fmt.Sprintf("arguments: %d bytes as JSON; a call takes at most %d", DefaultArgsCap+1, DefaultArgsCap))
}

// TestRewrittenNumbersAreMeasuredAgain: a number written 1e20 is
// rewritten 100000000000000000000 (17 bytes more), so arguments with a
// rewritten number are measured again: over the cap after the rewrite is
// refused though the call as sent was under it (heal.go:158 and :184, the
// count of rewritten numbers that marks the copy changed).
func TestRewrittenNumbersAreMeasuredAgain(t *testing.T) {
	tool := NewTool("sized", categories.Web, "", json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"},"pad":{"type":"string"}}}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, "", WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	rewritten := len(`{"n":100000000000000000000,"pad":""}`)
	a := args{"n": json.Number("1e20"), "pad": strings.Repeat("x", DefaultArgsCap+1-rewritten)}
	sent, err := json.Marshal(a)
	require.NoError(t, err)
	require.LessOrEqual(t, len(sent), DefaultArgsCap, "the call as sent is under the cap")
	obs := run(t, e, "sized", a)
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, fmt.Sprintf("arguments: %d bytes as JSON; a call takes at most %d", DefaultArgsCap+1, DefaultArgsCap))
}

// TestNormalizeToolNameOfExactlyTheMaximum: Normalize looks up a tool
// whose name is exactly MaxToolNameBytes long and heals its arguments
// (normalize.go:39, the name's boundary).
func TestNormalizeToolNameOfExactlyTheMaximum(t *testing.T) {
	name := strings.Repeat("x", MaxToolNameBytes)
	tool := NewTool(name, categories.Web, "", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		func(context.Context, map[string]any) (string, error) { return "ran", nil })
	e := newExec(t, "", WithTools(tool), WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web}}))
	got, err := e.Normalize(intent.ToolIntent{Tool: name, Args: args{"n": "2"}})
	require.NoError(t, err)
	assert.Equal(t, args{"n": json.Number("2")}, got.Args)
}

// TestWriteFileOfExactlyTheReadCap: write_file accepts content of
// exactly the read cap and refuses one byte more (builtin_write.go:41).
func TestWriteFileOfExactlyTheReadCap(t *testing.T) {
	root := t.TempDir()
	const readCap = 1 << 10
	e := newExec(t, root, WithReadCap(readCap), WithPolicy(rwPolicy()))
	obs := run(t, e, "write_file", args{"path": "exact.txt", "content": strings.Repeat("x", readCap)})
	require.True(t, obs.OK(), obs.Content)
	b, err := os.ReadFile(filepath.Join(root, "exact.txt"))
	require.NoError(t, err)
	assert.Len(t, b, readCap)
	obs = run(t, e, "write_file", args{"path": "over.txt", "content": strings.Repeat("x", readCap+1)})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)
	assert.NoFileExists(t, filepath.Join(root, "over.txt"))
}

// TestZeroOptionsKeepTheDefaults: WithTimeout, WithOutputCap, WithReadCap
// and WithMaxAbandoned of 0 keep their defaults, as documented, rather
// than a zero timeout, cap or allowance (options.go:32, :43, :54, :81).
func TestZeroOptionsKeepTheDefaults(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "f.txt"), "content\n"))
	tool := NewTool("echo", categories.Web, "", json.RawMessage(`{"type":"object"}`),
		func(context.Context, map[string]any) (string, error) { return "output", nil })
	e := newExec(t, root, WithTools(tool), WithTimeout(0), WithOutputCap(0), WithReadCap(0), WithMaxAbandoned(0),
		WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web, categories.FileRead}}))
	obs := run(t, e, "echo", nil)
	assert.Equal(t, intent.StatusOK, obs.Status, obs.Content)
	assert.Equal(t, "output", obs.Content)
	assert.False(t, obs.Truncated)
	obs = run(t, e, "read_file", args{"path": "f.txt"})
	assert.Equal(t, "content\n", obs.Content)
	assert.False(t, obs.Truncated)
}
