package fstools

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp/syntax"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
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
// (builtin_search.go:78, the visit count and its bound).
//
// TestGrepStopsAfterMaxWalkEntriesFiles: grep searches at most
// maxWalkEntries regular files: exactly that many are all searched, one
// more stops the walk and says so (builtin_search.go:310, the count and
// its bound).
//
// Both in one test, on one folder: glob's bound counts the folder, grep's
// does not, so the file that stops glob's walk is the last one grep's
// searches whole. The bound is lowered to 1,000 for the test (the
// counting is the same at any bound; a folder of 100,000 files took 25 s
// of CPU under -race), so the test does not run in parallel: no other
// test walks while it holds the lower bound.
func TestGlobStopsAfterMaxWalkEntries(t *testing.T) {
	require.Equal(t, 100000, maxWalkEntries, "the bound users get")
	maxWalkEntries = 1000
	t.Cleanup(func() { maxWalkEntries = 100000 })
	root := t.TempDir()
	emptyFiles(t, root, maxWalkEntries-1)
	// The bounds checked here are counts, not times: no timeout cuts the
	// walk on a loaded machine.
	e := newExec(t, root, WithReadCap(4<<10), executor.WithTimeout(10*time.Minute))
	obs := run(t, e, "glob", args{"pattern": "*.none"})
	require.True(t, obs.OK(), obs.Content)
	assert.False(t, obs.Truncated, "exactly maxWalkEntries visits, the folder included")
	assert.Contains(t, obs.Content, "no path under . matches")

	// The last file of the walk (in lexical order) holds grep's only
	// match: maxWalkEntries files now, maxWalkEntries+1 entries.
	require.NoError(t, writeFile(filepath.Join(root, "z-last"), "needle\n"))
	obs = run(t, e, "glob", args{"pattern": "*.none"})
	require.True(t, obs.OK(), obs.Content)
	assert.True(t, obs.Truncated)
	assert.Contains(t, obs.Content, fmt.Sprintf("[truncated: stopped after visiting %d entries]", maxWalkEntries))

	t.Run("grep", func(t *testing.T) {
		obs := run(t, e, "grep", args{"pattern": "needle"})
		require.True(t, obs.OK(), obs.Content)
		assert.Equal(t, "z-last:1: needle\n", obs.Content, "exactly maxWalkEntries files: the last one searched too")
		assert.False(t, obs.Truncated)

		require.NoError(t, writeFile(filepath.Join(root, "z-one-more"), ""))
		obs = run(t, e, "grep", args{"pattern": "needle"})
		require.True(t, obs.OK(), obs.Content)
		assert.True(t, obs.Truncated)
		assert.Equal(t, fmt.Sprintf("z-last:1: needle\n[truncated: stopped after %d files]", maxWalkEntries), obs.Content)
	})
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
	assert.Equal(t, intent.ReasonBadPath, obs.Reason)
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
	assert.Equal(t, intent.ReasonBadPath, obs.Reason, obs.Content)
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
		assert.Equal(t, intent.ReasonOutsideRoot, obs.Reason, "%s: %s", p, obs.Content)
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
	require.NoError(t, os.Symlink(deep(executor.MaxPathDepth), filepath.Join(root, "max")))
	require.NoError(t, os.Symlink(deep(executor.MaxPathDepth)+"/.", filepath.Join(root, "maxdot")))
	require.NoError(t, os.Symlink(deep(executor.MaxPathDepth+1), filepath.Join(root, "over")))
	e := newExec(t, root)
	for _, p := range []string{"max", "maxdot"} {
		obs := run(t, e, "read_file", args{"path": p})
		assert.Equal(t, intent.ReasonNotFound, obs.Reason, "%s: %s", p, obs.Content)
	}
	obs := run(t, e, "read_file", args{"path": "over"})
	assert.Equal(t, intent.ReasonBadPath, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, fmt.Sprintf("\"over\" is more than %d folders deep once its symbolic links are followed", executor.MaxPathDepth))
	// As the model's own path of that depth is.
	assert.Equal(t, intent.ReasonBadPath, run(t, e, "read_file", args{"path": deep(executor.MaxPathDepth + 1)}).Reason)
}

// TestWriteFileOfExactlyTheReadCap: write_file accepts content of
// exactly the read cap and refuses one byte more (builtin_write.go:41).
func TestWriteFileOfExactlyTheReadCap(t *testing.T) {
	root := t.TempDir()
	const readCap = 1 << 10
	e := newExec(t, root, WithReadCap(readCap), executor.WithPolicy(rwPolicy()))
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
	tool := executor.NewTool("echo", categories.Web, "", json.RawMessage(`{"type":"object"}`),
		func(context.Context, map[string]any) (string, error) { return "output", nil })
	e := newExec(t, root, executor.WithTools(tool), executor.WithTimeout(0), executor.WithOutputCap(0), WithReadCap(0), executor.WithMaxAbandoned(0),
		executor.WithPolicy(categories.Policy{Categories: []categories.Category{categories.Web, categories.FileRead}}))
	obs := run(t, e, "echo", nil)
	assert.Equal(t, intent.StatusOK, obs.Status, obs.Content)
	assert.Equal(t, "output", obs.Content)
	assert.False(t, obs.Truncated)
	obs = run(t, e, "read_file", args{"path": "f.txt"})
	assert.Equal(t, "content\n", obs.Content)
	assert.False(t, obs.Truncated)
}

// grepFile makes a folder holding one file name with content, and an
// executor over it with the given read cap.
func grepFile(t *testing.T, name, content string, readCap int64) *executor.Executor {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, name), content))
	return newExec(t, root, WithReadCap(readCap))
}

// TestGrepMaxResultsOfOne: max_results 1 (the schema's minimum) shows one
// matching line and says it stopped, rather than taking the default of
// 200 (builtin_search.go:204, the default's bound).
func TestGrepMaxResultsOfOne(t *testing.T) {
	e := grepFile(t, "f.txt", "needle 1\nneedle 2\nneedle 3\n", 4<<10)
	obs := run(t, e, "grep", args{"pattern": "needle", "max_results": 1})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "f.txt:1: needle 1\n[truncated: stopped after 1 matching lines; narrow the search or raise max_results]", obs.Content)
	assert.True(t, obs.Truncated)
}

// TestGrepRefusesAMalformedGlob: a glob that is not a valid pattern is
// refused as invalid arguments, not taken to match nothing
// (builtin_search.go:216, the glob is checked when one is given).
func TestGrepRefusesAMalformedGlob(t *testing.T) {
	e := grepFile(t, "f.txt", "needle\n", 4<<10)
	obs := run(t, e, "grep", args{"pattern": "needle", "glob": "[a"})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, "malformed")
	assert.Equal(t, "f.txt:1: needle\n", run(t, e, "grep", args{"pattern": "needle"}).Content, "no glob: every file")
}

// TestGrepBigFilesNoteNamesThem: the note on files cut at the read cap
// names them all when they are 10 or fewer, and the first 10 and how many
// more otherwise (builtin_search.go:266, "and N more" only when some are
// not shown).
func TestGrepBigFilesNoteNamesThem(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("needle\n", 20) // 140 bytes
	require.NoError(t, writeFile(filepath.Join(root, "one.txt"), big))
	e := newExec(t, root, WithReadCap(64))
	obs := run(t, e, "grep", args{"pattern": "needle", "paths": []any{"one.txt"}})
	require.True(t, obs.OK(), obs.Content)
	assert.True(t, obs.Truncated)
	assert.True(t, strings.HasSuffix(obs.Content, "\n[truncated: only the first 64 bytes of 1 file(s) were searched: one.txt]"), obs.Content)

	many := filepath.Join(root, "many")
	require.NoError(t, os.Mkdir(many, 0o755))
	for i := range 11 {
		require.NoError(t, writeFile(filepath.Join(many, fmt.Sprintf("f%02d.txt", i)), big))
	}
	obs = run(t, e, "grep", args{"pattern": "needle", "paths": []any{"many"}})
	require.True(t, obs.OK(), obs.Content)
	assert.True(t, strings.HasSuffix(obs.Content, "\n[truncated: only the first 64 bytes of 11 file(s) were searched: "+
		"many/f00.txt, many/f01.txt, many/f02.txt, many/f03.txt, many/f04.txt, many/f05.txt, many/f06.txt, many/f07.txt, many/f08.txt, many/f09.txt and 1 more]"), obs.Content)
}

// TestGrepWithoutNotesIsNotTruncated: a search that stopped at no limit
// is not marked truncated (builtin_search.go:275, only notes mark it).
func TestGrepWithoutNotesIsNotTruncated(t *testing.T) {
	e := grepFile(t, "f.txt", "needle\nhay\n", 4<<10)
	obs := run(t, e, "grep", args{"pattern": "needle"})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "f.txt:1: needle\n", obs.Content)
	assert.False(t, obs.Truncated)
	obs = run(t, e, "grep", args{"pattern": "nothing"})
	assert.Equal(t, `no line matches "nothing"`, obs.Content)
	assert.False(t, obs.Truncated)
}

// TestGrepSkipsAFileStartingWithNUL: a file whose first byte is NUL is
// binary and skipped (builtin_search.go:355, the NUL's index compared
// with 0).
func TestGrepSkipsAFileStartingWithNUL(t *testing.T) {
	e := grepFile(t, "nul.dat", "\x00needle\n", 4<<10)
	obs := run(t, e, "grep", args{"pattern": "needle"})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, `no line matches "needle"`, obs.Content)
}

// TestGrepCountsEmptyLines: an empty line is a line: the match after it
// is on line 2, shown alone (builtin_search.go:364, a newline at index 0).
func TestGrepCountsEmptyLines(t *testing.T) {
	e := grepFile(t, "f.txt", "\nneedle\n\n\nneedle again\n", 4<<10)
	obs := run(t, e, "grep", args{"pattern": "needle"})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "f.txt:2: needle\nf.txt:5: needle again\n", obs.Content)
}

// TestGrepLineOfExactlyTheWindowIsWhole: a line of exactly the matching
// window is matched whole, with no note; one byte longer is matched in
// part and said so (builtin_search.go:376, the window's bound).
func TestGrepLineOfExactlyTheWindowIsWhole(t *testing.T) {
	_, insts, err := compileBounded("needle")
	require.NoError(t, err)
	w := lineWindow(insts)
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "exact.txt"), strings.Repeat("x", w-len("needle"))+"needle\n"))
	require.NoError(t, writeFile(filepath.Join(root, "over.txt"), strings.Repeat("x", w-len("needle")+1)+"needle\n"))
	e := newExec(t, root, WithReadCap(int64(4*w)))

	obs := run(t, e, "grep", args{"pattern": "needle", "paths": []any{"exact.txt"}})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "exact.txt:1: "+strings.Repeat("x", maxGrepLineBytes)+" [line cut]\n", obs.Content)
	assert.False(t, obs.Truncated)

	obs = run(t, e, "grep", args{"pattern": "needle", "paths": []any{"over.txt"}})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, fmt.Sprintf("no line matches \"needle\"\n[truncated: 1 line(s) longer than %d bytes were searched in their first %d bytes only]", w, w), obs.Content)
	assert.True(t, obs.Truncated)
}

// TestGrepLineOfExactlyMaxGrepLineBytesIsWhole: a matching line of
// exactly maxGrepLineBytes is shown whole; one byte more is cut
// (builtin_search.go:389, the cut's bound).
func TestGrepLineOfExactlyMaxGrepLineBytesIsWhole(t *testing.T) {
	exact := strings.Repeat("x", maxGrepLineBytes-len("needle")) + "needle"
	e := grepFile(t, "f.txt", exact+"\ny"+exact+"\n", 4<<10)
	obs := run(t, e, "grep", args{"pattern": "needle"})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "f.txt:1: "+exact+"\nf.txt:2: y"+exact[:maxGrepLineBytes-1]+" [line cut]\n", obs.Content)
}

// TestGrepCutsLongLinesOnARuneStart: a long matching line is cut before
// the rune that straddles maxGrepLineBytes, never inside it; a line with
// no rune start before the cut is shown empty, without a panic
// (builtin_search.go:391, the backward search for a rune start).
func TestGrepCutsLongLinesOnARuneStart(t *testing.T) {
	straddling := strings.Repeat("x", maxGrepLineBytes-1) + "é needle" // é is bytes 299 and 300
	noStart := strings.Repeat("\x80", maxGrepLineBytes+1) + " needle"
	e := grepFile(t, "f.txt", straddling+"\n"+noStart+"\n", 4<<10)
	obs := run(t, e, "grep", args{"pattern": "needle"})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "f.txt:1: "+strings.Repeat("x", maxGrepLineBytes-1)+" [line cut]\nf.txt:2:  [line cut]\n", obs.Content)
	assert.True(t, utf8.ValidString(obs.Content))
}

// TestGrepPatternEstimatedAtExactlyTheLimit: a pattern whose program is
// estimated at exactly maxRegexpInsts is accepted, one estimated at one
// more refused (builtin_search.go:430, the limit's bound).
func TestGrepPatternEstimatedAtExactlyTheLimit(t *testing.T) {
	for p, est := range map[string]int{"a{998}b": maxRegexpInsts, "a{998}bc": maxRegexpInsts + 1} {
		parsed, err := syntax.Parse(p, syntax.Perl)
		require.NoError(t, err)
		require.Equal(t, est, estimateInsts(parsed), p)
	}
	e := grepFile(t, "f.txt", strings.Repeat("a", 998)+"b\n", 4<<10)
	obs := run(t, e, "grep", args{"pattern": "a{998}b"})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "f.txt:1: "+strings.Repeat("a", maxGrepLineBytes)+" [line cut]\n", obs.Content)
	obs = run(t, e, "grep", args{"pattern": "a{998}bc"})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, "is too large: it compiles to about 2001 instructions")
}

// TestGrepFileOfExactlyTheReadCap: a file of exactly the read cap is
// searched whole, with no note; one byte more is cut and named
// (builtin_search.go:351, the cap's bound).
func TestGrepFileOfExactlyTheReadCap(t *testing.T) {
	root := t.TempDir()
	const readCap = 64
	line := strings.Repeat("x", 9) + "needle\n" // 16 bytes
	require.NoError(t, writeFile(filepath.Join(root, "exact.txt"), strings.Repeat(line, readCap/16)))
	require.NoError(t, writeFile(filepath.Join(root, "over.txt"), strings.Repeat(line, readCap/16)+"y"))
	e := newExec(t, root, WithReadCap(readCap))

	obs := run(t, e, "grep", args{"pattern": "needle", "paths": []any{"exact.txt"}})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "exact.txt:1: xxxxxxxxxneedle\nexact.txt:2: xxxxxxxxxneedle\nexact.txt:3: xxxxxxxxxneedle\nexact.txt:4: xxxxxxxxxneedle\n", obs.Content)
	assert.False(t, obs.Truncated)

	obs = run(t, e, "grep", args{"pattern": "needle", "paths": []any{"over.txt"}})
	require.True(t, obs.OK(), obs.Content)
	assert.True(t, obs.Truncated)
	assert.True(t, strings.HasSuffix(obs.Content, "xxxxxxxxxneedle\n[truncated: only the first 64 bytes of 1 file(s) were searched: over.txt]"), obs.Content)
}

// TestDescribeGivesRegisteredToolsOnly: Describe gives a registered
// tool's description, the index tool's included, and "" for a name the
// executor does not have (describe.go:208, which no test reached).
func TestDescribeGivesRegisteredToolsOnly(t *testing.T) {
	tool := executor.NewTool("echo", categories.Web, "Echoes its input.", json.RawMessage(`{"type":"object"}`),
		func(context.Context, map[string]any) (string, error) { return "", nil })
	e := newExec(t, t.TempDir(), executor.WithTools(tool))
	assert.Equal(t, "Echoes its input.", e.Describe("echo"))
	assert.NotEmpty(t, e.Describe(categories.IndexTool))
	assert.Empty(t, e.Describe("nope"))
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

// TestGrepRefusesEveryProgramOverTheLimit: patterns whose program is over
// maxRegexpInsts (repetitions of a long part, x{n,} and nested x{0,m})
// are refused, and the estimate bounds every program from above as
// TestEstimateInstsIsAnUpperBound asks (builtin_search.go:467, x{n,}
// counted as n+1 copies; :474, each copy's split and the repetition's own
// instruction).
func TestGrepRefusesEveryProgramOverTheLimit(t *testing.T) {
	part := func(n int) string { return strings.Repeat("abcdefghij", n/10) + "abcdefghij"[:n%10] }
	for _, p := range []string{
		"(?:" + part(100) + "){20,}",         // 20 copies of 100 and a split
		"(?:(?:" + part(79) + "){0,5}){0,5}", // 25 optional copies of 79
	} {
		parsed, err := syntax.Parse(p, syntax.Perl)
		require.NoError(t, err, p)
		prog, err := syntax.Compile(parsed.Simplify())
		require.NoError(t, err, p)
		require.Greater(t, len(prog.Inst), maxRegexpInsts, "%s compiles to more than the limit", p)
		_, _, err = compileBounded(p)
		assert.ErrorContains(t, err, "is too large", p)
	}
	for _, p := range []string{`(?:abcdefghij){2,}`, `(?:(?:abc){0,5}){0,5}`, `(?:(?:abc){0,2}){0,3}`} {
		parsed, err := syntax.Parse(p, syntax.Perl)
		require.NoError(t, err, p)
		prog, err := syntax.Compile(parsed.Simplify())
		require.NoError(t, err, p)
		assert.GreaterOrEqual(t, estimateInsts(parsed)+4, len(prog.Inst), p)
	}
}
