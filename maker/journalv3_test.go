package maker_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
)

// v3FixtureKey keyed testdata/v3-hanoi6-keyed.jsonl; it is not a secret.
const v3FixtureKey = "v3 fixture key, not a secret"

// TestVersion3JournalResumes: journals written by an earlier build in
// format version 3 are read and resumed by this one, and end with the
// uninterrupted run's result: one keyed with MDAP_JOURNAL_KEY with that
// key, one without a key (version 3's default) only with JournalUnsigned
// (--journal-unsigned); without it, it is refused with a message that
// says how to go on (TestVersion3UnkeyedRefusedByDefault). testdata/v3-hanoi6.jsonl and
// v3-hanoi6-keyed.jsonl (the latter under v3FixtureKey) were written by
// main at 439dc2a: 6-disk Hanoi on the sim (seed 1), k 3, a checkpoint
// every 16 steps, stopped after 40 of its 63 steps (MaxSteps): a header,
// 40 step lines and 2 checkpoints. They are inputs, never to be written
// again by a later build. Each is resumed as it is and with a torn last
// line (a crash mid-write), which is dropped.
func TestVersion3JournalResumes(t *testing.T) {
	solve := func(j *journal.Journal) (maker.Report, *hanoi.Task, error) {
		cfg := sim.DefaultConfig()
		cfg.Seed = 1
		m, err := sim.New(hanoi.Oracle{}, cfg)
		require.NoError(t, err)
		task, err := hanoi.New(6)
		require.NoError(t, err)
		rep, err := (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: m, Journal: j}).Solve(context.Background(), task)
		return rep, task, err
	}
	t.Setenv(journal.KeyEnv, "")
	want, task, err := solve(nil)
	require.NoError(t, err)
	require.True(t, task.Solved())

	for _, c := range []struct{ file, key, torn string }{
		{"v3-hanoi6.jsonl", "", ""},
		{"v3-hanoi6-keyed.jsonl", v3FixtureKey, ""},
		{"v3-hanoi6.jsonl", "", `{"step":40,"k":3,"winner":{"val`},
		{"v3-hanoi6-keyed.jsonl", v3FixtureKey, `{"st`},
	} {
		var opts []journal.Option
		if c.key == "" {
			opts = append(opts, journal.Unsigned())
		}
		name := c.file + "+" + c.torn
		b, err := os.ReadFile(filepath.Join("testdata", c.file))
		require.NoError(t, err)
		require.Contains(t, string(b), `{"mdap_journal":3,`, name)
		path := filepath.Join(t.TempDir(), c.file)
		require.NoError(t, os.WriteFile(path, append(b, c.torn...), 0o644))
		t.Setenv(journal.KeyEnv, c.key)
		j, err := journalfile.Open(path, opts...)
		require.NoError(t, err, name)
		assert.Equal(t, len(c.torn), j.TornBytes(), name)
		got, task, err := solve(j)
		require.NoError(t, err, name)
		require.NoError(t, j.Close())
		assert.True(t, task.Solved(), name)
		assert.Equal(t, 40, got.Resumed, name)
		assert.Equal(t, want.Steps, got.Steps, name)
		assert.Equal(t, want.Counts, got.Counts, name)
		assert.Equal(t, want.Flags, got.Flags, name)
		assert.Equal(t, want.SampleHistogram, got.SampleHistogram, name)
		assert.Equal(t, want.Usage.InputTokens, got.Usage.InputTokens, name)
		assert.Equal(t, want.Usage.OutputTokens, got.Usage.OutputTokens, name)

		// The resumed file is whole: it opens again, and is done.
		j, err = journalfile.Open(path, opts...)
		require.NoError(t, err, name)
		again, task, err := solve(j)
		require.NoError(t, err, name)
		require.NoError(t, j.Close())
		assert.True(t, again.Done && task.Solved(), name)
		assert.Equal(t, want.Steps, again.Resumed, name)
	}
}

// TestVersion3UnkeyedRefusedByDefault: a version 3 journal written
// without a key (that version's default) is refused by default, changing
// nothing, with a message naming the version and the two ways on
// (--journal-unsigned, or a new run); the keyed one is refused without
// its key.
func TestVersion3UnkeyedRefusedByDefault(t *testing.T) {
	t.Setenv(journal.KeyEnv, "")
	for _, file := range []string{"v3-hanoi6.jsonl", "v3-hanoi6-keyed.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), file)
		require.NoError(t, os.WriteFile(path, b, 0o600))
		_, err = journalfile.Open(path)
		require.Error(t, err, file)
		if file == "v3-hanoi6.jsonl" {
			require.ErrorIs(t, err, journal.ErrKey)
			assert.Contains(t, err.Error(), "journal version 3")
			assert.Contains(t, err.Error(), "--journal-unsigned")
			assert.Contains(t, err.Error(), "start a new run")
		} else {
			require.ErrorIs(t, err, journal.ErrCorrupt)
			assert.Contains(t, err.Error(), journal.KeyEnv)
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, b, got, "a refused journal is left as it was")
	}
}
