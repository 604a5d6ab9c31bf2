package maker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainOutcome resumes the journal at path with a 6-step snapCounter and
// returns the report, the task and the error.
func chainOutcome(t *testing.T, path string, opts ...journal.Option) (Report, *snapCounter, error) {
	t.Helper()
	task := &snapCounter{counter: counter{target: 6}}
	j, err := journalfile.Open(path, opts...)
	if err != nil {
		return Report{}, task, err
	}
	defer j.Close()
	rep, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), task)
	return rep, task, err
}

// sameResult asserts that rep is the uninterrupted run's result: the
// same steps, votes, counts and tokens (not the wall times).
func sameResult(t *testing.T, want, rep Report, task *snapCounter, msg string) {
	t.Helper()
	assert.True(t, rep.Done, msg)
	assert.Equal(t, 6, task.n, msg)
	assert.Equal(t, 0, task.wrong, msg)
	assert.Equal(t, want.Steps, rep.Steps, msg)
	assert.Equal(t, want.Counts, rep.Counts, msg)
	assert.Equal(t, want.Flags, rep.Flags, msg)
	assert.Equal(t, want.SampleHistogram, rep.SampleHistogram, msg)
	assert.Equal(t, want.Usage.InputTokens, rep.Usage.InputTokens, msg)
	assert.Equal(t, want.Usage.OutputTokens, rep.Usage.OutputTokens, msg)
}

var lineRef = regexp.MustCompile(`:\d+ |line \d+ `)

// TestJournalEditTable edits a finished journal every way a hostile or
// careless hand would, keeping it parseable, and resumes it: each edit
// either reproduces the original result or is refused as corruption
// naming the first edited line, and a refused journal is left as it was.
func TestJournalEditTable(t *testing.T) {
	dir := t.TempDir()
	orig := finished(t, filepath.Join(dir, "orig"), 3) // header, steps 0-2, checkpoint, steps 3-5
	want, _, err := chainOutcome(t, filepath.Join(dir, "orig"))
	require.NoError(t, err)
	require.True(t, want.Done)

	sub := func(line int, old, new string) func([]string) string {
		return func(l []string) string {
			require.Contains(t, l[line], old)
			l[line] = strings.Replace(l[line], old, new, 1)
			return strings.Join(l, "")
		}
	}
	cases := []struct {
		name string
		edit func(l []string) string
		line int // the first bad line (from 1); 0: the original result; -1: a rollback
	}{
		{"a winner changed", sub(2, `"next":2`, `"next":9`), 3},
		{"a winner changed after the checkpoint", sub(7, `"next":6`, `"next":7`), 8},
		{"a vote changed", sub(3, `":3,`, `":4,`), 4},
		{"a count changed (launched)", sub(6, `"launched":4`, `"launched":40`), 7},
		{"a count changed (valid)", sub(1, `"valid":4`, `"valid":3`), 2},
		{"a count changed (errors)", sub(6, `"errors":0`, `"errors":1`), 7},
		{"tokens changed", sub(7, `"output_tokens":20`, `"output_tokens":2`), 8},
		{"the checkpoint's state changed", sub(4, `"task_state":{"n":3`, `"task_state":{"n":4`), 5},
		{"the checkpoint's report changed", sub(4, `"report":{"steps":3`, `"report":{"steps":2`), 5},
		{"the checkpoint's step changed", sub(4, `{"checkpoint":3`, `{"checkpoint":2`), 5},
		{"the header's settings changed", sub(0, `"k":2`, `"k":3`), 1},
		{"a line dropped", func(l []string) string { return strings.Join(append(l[:2:2], l[3:]...), "") }, 3},
		{"the checkpoint dropped", func(l []string) string { return strings.Join(append(l[:4:4], l[5:]...), "") }, 5},
		{"a line duplicated", func(l []string) string { return strings.Join(append(l[:3:3], l[2:]...), "") }, 4},
		{"the last line duplicated", func(l []string) string { return strings.Join(l, "") + l[7] }, 9},
		{"two lines swapped", func(l []string) string { l[5], l[6] = l[6], l[5]; return strings.Join(l, "") }, 6},
		{"a line from another journal", func(l []string) string { l[2] = l[1]; return strings.Join(l, "") }, 3},
		{"the chain value of a line changed", func(l []string) string {
			i := strings.Index(l[5], `"chain":"`) + len(`"chain":"`)
			b := []byte(l[5])
			b[i] ^= 1
			l[5] = string(b)
			return strings.Join(l, "")
		}, 6},
		{"the chain field removed", func(l []string) string {
			i := strings.Index(l[3], `,"chain":"`)
			l[3] = l[3][:i] + "}\n"
			return strings.Join(l, "")
		}, 4},
		{"the last line dropped", func(l []string) string { return strings.Join(l[:7], "") }, -1},
		{"the last line torn", func(l []string) string { return strings.Join(l[:7], "") + l[7][:40] }, -1},
		{"cut back to the checkpoint", func(l []string) string { return strings.Join(l[:5], "") }, -1},
		{"cut back to the header", func(l []string) string { return l[0] }, -1},
	}
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		content := c.edit(append([]string(nil), orig...))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		rep, task, err := chainOutcome(t, path)
		if c.line == 0 {
			require.NoError(t, err, c.name)
			sameResult(t, want, rep, task, c.name)
			continue
		}
		if c.line < 0 {
			require.ErrorIs(t, err, journal.ErrRollback, c.name)
			assert.Contains(t, err.Error(), "truncated, or an older copy was put back", c.name)
			assert.Equal(t, content, string(mustRead(t, path)), "%s: a refused journal is left as it was", c.name)
			continue
		}
		require.ErrorIs(t, err, journal.ErrCorrupt, c.name)
		assert.Contains(t, err.Error(), fmt.Sprintf("%s:%d ", path, c.line), c.name)
		assert.Equal(t, content, string(mustRead(t, path)), "%s: a refused journal is left as it was", c.name)
	}
}

// TestJournalEveryByteFlipRefusedOrHarmless flips bits of bytes all over
// a finished journal (every byte was run with MDAP_EVERY_BYTE=1): every flip is refused as corruption (or a version
// or key refusal), naming a line, or replays into the original result.
func TestJournalEveryByteFlipRefusedOrHarmless(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j")
	orig := []byte(strings.Join(finished(t, path, 3), ""))
	want, _, err := chainOutcome(t, path)
	require.NoError(t, err)
	// Every 11th byte by default (about 2 s); every byte with
	// MDAP_EVERY_BYTE=1 (about 30 s).
	stride := 11
	if os.Getenv("MDAP_EVERY_BYTE") != "" {
		stride = 1
	}
	refused := 0
	for i := 0; i < len(orig); i += stride {
		for _, bit := range []byte{0x01, 0x20} {
			b := bytes.Clone(orig)
			b[i] ^= bit
			require.NoError(t, os.WriteFile(path, b, 0o644))
			rep, task, err := chainOutcome(t, path)
			if err != nil {
				refused++
				msg := fmt.Sprintf("byte %d ^ %#x: %v", i, bit, err)
				require.True(t, errors.Is(err, journal.ErrCorrupt) || errors.Is(err, journal.ErrVersion) || errors.Is(err, journal.ErrKey) || errors.Is(err, journal.ErrRollback), msg)
				if errors.Is(err, journal.ErrCorrupt) {
					require.Regexp(t, lineRef, err.Error(), msg)
				}
				continue
			}
			sameResult(t, want, rep, task, fmt.Sprintf("byte %d ^ %#x", i, bit))
		}
	}
	assert.Greater(t, refused, len(orig)/stride, "almost every flip is refused")
}

// reseal rewrites the chain of a journal's lines with key (nil: the
// unkeyed SHA-256 chain), as a forger who knows that key would.
func reseal(t *testing.T, lines []string, key []byte) string {
	t.Helper()
	c := newChain(key)
	var b strings.Builder
	for _, l := range lines {
		if l == "" {
			continue
		}
		js := unseal([]byte(strings.TrimSuffix(l, "\n")))
		b.Write(c.seal(js))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestJournalKeyedChain: with MDAP_JOURNAL_KEY set, a journal rewritten
// consistently by someone without the key (another key, or an unkeyed
// chain with the header's keyed mark removed) is refused, as is resuming
// without the key or with a wrong one; the same key resumes it.
func TestJournalKeyedChain(t *testing.T) {
	dir := t.TempDir()
	key := "0123456789abcdef0123456789abcdef"
	t.Setenv(journal.KeyEnv, key)
	path := filepath.Join(dir, "j")
	orig := finished(t, path, 3)
	require.Contains(t, orig[0], `"keyed":true`)
	want, _, err := chainOutcome(t, path)
	require.NoError(t, err)

	// Forged with the wrong key: refused at line 1, naming the key.
	forged := append([]string(nil), orig...)
	forged[2] = strings.Replace(forged[2], `"next":2`, `"next":9`, 1)
	require.NoError(t, os.WriteFile(path, []byte(reseal(t, forged, []byte("another key, 16 bytes or more"))), 0o644))
	_, _, err = chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Contains(t, err.Error(), path+":1 ")
	assert.Contains(t, err.Error(), journal.KeyEnv)

	// Forged as an unsigned journal: refused without the opt-out.
	forged[0] = strings.Replace(forged[0], `,"keyed":true`, ``, 1)
	require.NoError(t, os.WriteFile(path, []byte(reseal(t, forged, nil)), 0o644))
	_, _, err = chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrKey)
	assert.Contains(t, err.Error(), "is unsigned")

	// Forged with the right key: the chain cannot tell (the key is the
	// secret), but a one-byte edit without resealing is refused.
	edited := append([]string(nil), orig...)
	edited[6] = strings.Replace(edited[6], `"launched":4`, `"launched":5`, 1)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(edited, "")), 0o644))
	_, _, err = chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Contains(t, err.Error(), path+":7 ")

	// The original resumes with the key, and is refused with the state
	// folder's key, with a wrong one, or unsigned.
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(orig, "")), 0o644))
	rep, task, err := chainOutcome(t, path)
	require.NoError(t, err)
	sameResult(t, want, rep, task, "the same key")
	_, _, err = chainOutcome(t, path, journal.Unsigned())
	require.ErrorIs(t, err, journal.ErrKey)
	assert.Contains(t, err.Error(), "without --journal-unsigned")
	t.Setenv(journal.KeyEnv, "")
	_, _, err = chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Contains(t, err.Error(), path+":1 ")
	t.Setenv(journal.KeyEnv, "fedcba9876543210fedcba9876543210")
	_, _, err = chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Contains(t, err.Error(), path+":1 ")

	// A key too short is refused before anything is read or written.
	t.Setenv(journal.KeyEnv, "short")
	_, err = journalfile.Create(filepath.Join(dir, "new"))
	require.ErrorIs(t, err, journal.ErrKey)
	_, err = journal.New(&statetest.MemStore{})
	require.ErrorIs(t, err, journal.ErrKey)
}

// TestUnsignedJournalOnlyWithTheOptOut: a journal written with
// journal.Unsigned (--journal-unsigned) has a plain SHA-256 chain and no
// recorded head; it is refused without the opt-out (a forger could have
// written it), also with MDAP_JOURNAL_KEY set, and resumed with it, even
// truncated (nothing records its length).
func TestUnsignedJournalOnlyWithTheOptOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	lines := finished(t, path, 3, journal.Unsigned())
	require.NotContains(t, lines[0], `"keyed"`)
	_, _, err := chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrKey)
	assert.Contains(t, err.Error(), "resumed only with --journal-unsigned")
	t.Setenv(journal.KeyEnv, "0123456789abcdef0123456789abcdef")
	_, _, err = chainOutcome(t, path)
	require.ErrorIs(t, err, journal.ErrKey)
	t.Setenv(journal.KeyEnv, "")
	_, _, err = chainOutcome(t, path, journal.Unsigned())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:5], "")), 0o644))
	_, _, err = chainOutcome(t, path, journal.Unsigned())
	require.NoError(t, err, "an unsigned journal cannot tell a truncation from a crash")
}

// TestOldJournalVersionRefusedClearly: a version 2 journal (before the
// chain) is refused, not migrated, with a message saying what to do.
func TestOldJournalVersionRefusedClearly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	old := `{"mdap_journal":2,"task":"counter:6","settings":{"k":2}}` + "\n" +
		`{"step":0,"k":2,"winner":{"value":{"next":1}},"key":"35b465b0189f6597","votes":{"35b465b0189f6597":2},"launched":2,"valid":2,"flagged":0,"errors":0,"cancelled":0,"usage":{"input_tokens":1,"output_tokens":1,"latency_ns":1},"elapsed_ns":1}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
	_, err := journalfile.Open(path)
	require.ErrorIs(t, err, journal.ErrVersion)
	assert.Contains(t, err.Error(), "version 2")
	assert.Contains(t, err.Error(), "finish it with the build that wrote it")
	assert.Equal(t, old, string(mustRead(t, path)))
}
