package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/journal"
)

// rechain is the forger of issue 35 case 7, written apart from mdap's
// code as an attacker would: it recomputes every line's "chain" field as
// the SHA-256 of the previous value (32 zero bytes before the header)
// and the line's bytes before the field.
func rechain(t *testing.T, lines []string) string {
	t.Helper()
	var prev [32]byte
	var b strings.Builder
	for _, l := range lines {
		l = strings.TrimSuffix(l, "\n")
		if l == "" {
			continue
		}
		i := strings.LastIndex(l, `,"chain":"`)
		require.Positive(t, i, l)
		body := l[:i]
		prev = sha256.Sum256(append(prev[:], body...))
		b.WriteString(body + `,"chain":"` + hex.EncodeToString(prev[:]) + `"}` + "\n")
	}
	return b.String()
}

// TestBinaryJournalSignedByDefault runs the real binary: a journal is
// signed (0600, with a run id, its key 0600 in the state folder, never in
// the journal's); a forged and re-chained journal, a truncated one and an
// older copy put back are refused with exit status 2 and left as they
// were; an unsigned journal is written and resumed only with
// --journal-unsigned; a version 3 journal is refused with a message
// saying how to go on.
func TestBinaryJournalSignedByDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state := os.Getenv(journal.StateDirEnv)
	require.NotEmpty(t, state, "TestMain gives the children a state folder")
	run := func(want int, args ...string) string {
		t.Helper()
		c := start(t, nil, append([]string{"hanoi", "--disks", "3", "--progress", "off"}, args...)...)
		require.Equal(t, want, c.wait(t, time.Minute), "%v: %s", args, c.stderr.String())
		return c.stderr.String()
	}
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		return fi.Mode().Perm()
	}

	j := filepath.Join(dir, "j.jsonl")
	run(0, "--journal", j)
	orig, err := os.ReadFile(j)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(orig), "\n")
	require.Len(t, lines, 9, "a header, 7 steps and the empty rest")
	assert.Contains(t, lines[0], `"keyed":true`)
	assert.Regexp(t, `"run":"[0-9a-f]{32}"`, lines[0])
	assert.Equal(t, os.FileMode(0o600), mode(j))
	assert.Equal(t, os.FileMode(0o600), mode(filepath.Join(state, "journal.key")))
	assert.Equal(t, os.FileMode(0o700), mode(state))
	assert.NoFileExists(t, filepath.Join(dir, "journal.key"), "the key is never beside the journal")
	run(0, "--journal", j, "--resume") // the journal as written resumes

	refused := func(content, why string, args ...string) string {
		t.Helper()
		require.NoError(t, os.WriteFile(j, []byte(content), 0o600))
		stderr := run(2, append([]string{"--journal", j, "--resume"}, args...)...)
		assert.Contains(t, stderr, why)
		got, err := os.ReadFile(j)
		require.NoError(t, err)
		assert.Equal(t, content, string(got), "a refused journal is left as it was")
		return stderr
	}
	// Step 1's winner edited, the chain recomputed: the signature fails.
	forged := append([]string(nil), lines...)
	require.Contains(t, forged[2], `"winner":{"value":{"move":`)
	forged[2] = strings.Replace(forged[2], `"winner":{"value":{"move":[`, `"winner":{"value":{"move":[2,`, 1)
	refused(rechain(t, forged), "does not match the journal's hash chain")
	// The same, its signed mark dropped: unsigned, so refused by default,
	// and even with --journal-unsigned (the state folder recorded the run
	// as signed).
	forged[0] = strings.Replace(forged[0], `,"keyed":true`, "", 1)
	refused(rechain(t, forged), "--journal-unsigned")
	refused(rechain(t, forged), "was signed when it was written", "--journal-unsigned")
	// Truncated: the last step dropped; rolled back: the header alone.
	refused(strings.Join(lines[:7], ""), "truncated, or an older copy was put back")
	refused(lines[0], "truncated, or an older copy was put back")

	// An unsigned journal: written and resumed with the opt-out only.
	u := filepath.Join(dir, "u.jsonl")
	run(0, "--journal", u, "--journal-unsigned")
	b, err := os.ReadFile(u)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"keyed"`)
	assert.Contains(t, run(2, "--journal", u, "--resume"), "resumed only with --journal-unsigned")
	run(0, "--journal", u, "--resume", "--journal-unsigned")
	assert.Contains(t, run(2, "--journal-unsigned"), "--journal-unsigned applies to --journal only")

	// A journal of the previous format (version 3, unkeyed by default).
	old, err := os.ReadFile(filepath.Join("..", "..", "maker", "testdata", "v3-hanoi6.jsonl"))
	require.NoError(t, err)
	v3 := filepath.Join(dir, "v3.jsonl")
	require.NoError(t, os.WriteFile(v3, old, 0o600))
	stderr := run(2, "--journal", v3, "--resume")
	assert.Contains(t, stderr, "journal version 3")
	assert.Contains(t, stderr, "resume it with --journal-unsigned")
	got, err := os.ReadFile(v3)
	require.NoError(t, err)
	assert.Equal(t, old, got)
}

// asCrashed sets the chain head the state folder holds for the signed
// journal at path to the one a crash at the file's end leaves: the head
// recorded at its last checkpoint, or at its header (mdap records one
// when a journal begins, at each checkpoint and when it is closed; see
// docs/journal.md). A test that cuts a closed journal to stand for a
// crash calls it; without it the cut is a rollback, and refused.
func asCrashed(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	var h struct{ Run string }
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &h))
	require.Len(t, h.Run, 32, "a signed version 4 journal")
	n := 1
	for i, l := range lines {
		if strings.HasSuffix(l, "\n") && strings.HasPrefix(l, `{"checkpoint":`) {
			n = i + 1
		}
	}
	l := strings.TrimSuffix(lines[n-1], "\n")
	chain := l[len(l)-2-64 : len(l)-2]
	head, err := json.Marshal(map[string]any{"lines": n, "chain": chain, "journal": path})
	require.NoError(t, err)
	heads := filepath.Join(os.Getenv(journal.StateDirEnv), "journal-heads")
	require.NoError(t, os.WriteFile(filepath.Join(heads, h.Run+".json"), head, 0o600))
}

// TestBinaryJournalUnsignedSolveAndMCP: --journal-unsigned reaches the
// journals of maker solve --state and of maker mcp's run_task (no signed
// mark); by default they are signed; solve refuses it without a journal.
func TestBinaryJournalUnsignedSolveAndMCP(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id":"h3","hanoi":{"disks":3}}`+"\n"), 0o600))
	header := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		h, _, _ := strings.Cut(string(b), "\n")
		return h
	}
	onlyJournal := func(dir string) string {
		t.Helper()
		found, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		require.NoError(t, err)
		require.Len(t, found, 1)
		return found[0]
	}
	for _, unsigned := range []bool{false, true} {
		dir := filepath.Join(root, fmt.Sprint(unsigned))
		args := append([]string{"solve", tasks, "--out", filepath.Join(dir, "results.jsonl"), "--state", filepath.Join(dir, "state")}, simArgs...)
		if unsigned {
			args = append(args, "--journal-unsigned")
		}
		c := start(t, nil, args...)
		require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
		assert.Equal(t, !unsigned, strings.Contains(header(onlyJournal(filepath.Join(dir, "state"))), `"keyed":true`), "solve, unsigned %v", unsigned)

		state := filepath.Join(dir, "mcp")
		mcpArgs := []string{"mcp", "--root", root, "--state", state, "--log-level", "warn"}
		if unsigned {
			mcpArgs = append(mcpArgs, "--journal-unsigned")
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, "count.json"), countSpec(3), 0o600))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "unsigned-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command(binary, mcpArgs...)}, nil)
		require.NoError(t, err)
		run := ok(t, callTool(t, ctx, cs, "run_task", map[string]any{"spec_path": "count.json", "journal": "count.jsonl"}, ""))
		require.NoError(t, cs.Close())
		cancel()
		assert.Equal(t, true, run["done"], run["message"])
		assert.Equal(t, !unsigned, strings.Contains(header(filepath.Join(state, "count.jsonl")), `"keyed":true`), "mcp, unsigned %v", unsigned)
	}
	c := start(t, nil, append([]string{"solve", tasks, "--out", filepath.Join(root, "r.jsonl"), "--journal-unsigned"}, simArgs...)...)
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "--journal-unsigned applies to the tasks' journals")
}
