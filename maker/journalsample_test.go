package maker_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
)

// sampleSolver is 5-disk Hanoi on a sim with red flags, failed calls and
// wrong answers, drawn 4 at a time with 2 speculative draws, so that its
// steps hold every kind of sample: votes for the winner and for another
// answer, red flags, errors and cancelled draws.
func sampleSolver(t *testing.T, j *journal.Journal, progress func(maker.Event)) (*maker.Solver, *hanoi.Task) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate, cfg.ErrorRate = 3, 0.8, 0.08, 0.04
	cfg.Latency = sim.UniformLatency(0, 2*time.Millisecond)
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	task, err := hanoi.New(5)
	require.NoError(t, err)
	return &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2, Parallel: 4, Speculate: 2}}, Model: m, Journal: j, Progress: progress}, task
}

// TestJournalKeepsEachSample: a step's record keeps every sample the step
// drew, in index order, with what the step's counts say of them: the
// classes of the votes are the step's votes (the winner's left out, as
// the record's Key), the red flags its flags, the failed and cancelled
// draws its errors and cancelled, the tokens its usage. A resume replays
// the records, samples included, exactly as they were written.
func TestJournalKeepsEachSample(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	var live []journal.StepRecord
	s, task := sampleSolver(t, j, func(e maker.Event) { live = append(live, *e.Record) })
	_, err = s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())

	kinds := map[string]int{}
	for _, rec := range live {
		require.NotEmpty(t, rec.Samples, "step %d", rec.Step)
		votes, flags := map[string]int{}, map[string]int{}
		var c vote.Counts
		var in, out int
		for i, x := range rec.Samples {
			require.Equal(t, i, x.Index, "step %d: every sample, in index order", rec.Step)
			in, out = in+x.InputTokens, out+x.OutputTokens
			c.Launched++
			switch {
			case x.Cancelled:
				c.Cancelled++
				kinds["cancelled"]++
			case x.Error:
				c.Errors++
				kinds["error"]++
			case x.Flag != "":
				c.Flagged++
				kinds["flag"]++
				// The record's flags count by kind, a sample says why.
				for kind := range rec.Flags {
					if strings.HasPrefix(x.Flag, kind) || strings.Contains(x.Flag, kind) {
						flags[kind]++
					}
				}
			default:
				c.Valid++
				votes[cmp.Or(x.Class, rec.Key)]++
				if x.Class != "" {
					kinds["other class"]++
				} else {
					kinds["winner"]++
				}
			}
		}
		assert.Equal(t, rec.Votes, votes, "step %d", rec.Step)
		assert.Equal(t, rec.Counts, c, "step %d", rec.Step)
		assert.Equal(t, rec.Usage.InputTokens, in, "step %d", rec.Step)
		assert.Equal(t, rec.Usage.OutputTokens, out, "step %d", rec.Step)
		assert.Zero(t, rec.MoreSamples)
	}
	for _, k := range []string{"winner", "other class", "flag", "error", "cancelled"} {
		assert.Positive(t, kinds[k], "the run had samples of kind %q to record", k)
	}

	j, err = journalfile.Open(path)
	require.NoError(t, err)
	var replayed []journal.StepRecord
	s, task = sampleSolver(t, j, func(e maker.Event) {
		require.True(t, e.Replayed)
		replayed = append(replayed, *e.Record)
	})
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	require.Equal(t, len(live), rep.Resumed)
	require.Len(t, replayed, len(live))
	for i := range live {
		assert.Equal(t, live[i].Samples, replayed[i].Samples, "step %d: replayed as written", i)
	}
}

// TestJournalSampleEditIsDetected: the hash chain covers each sample of a
// step's record, so a sample's record changed in the file (a red flag
// made a vote, a vote moved to another class, its tokens changed) is
// refused when the journal is opened, naming that line, in a signed
// journal and in an unsigned one.
func TestJournalSampleEditIsDetected(t *testing.T) {
	for _, signed := range []bool{true, false} {
		var opts []journal.Option
		if !signed {
			opts = append(opts, journal.Unsigned())
		}
		path := filepath.Join(t.TempDir(), "run.jsonl")
		j, err := journalfile.Create(path, opts...)
		require.NoError(t, err)
		s, task := sampleSolver(t, j, nil)
		_, err = s.Solve(context.Background(), task)
		require.NoError(t, err)
		require.NoError(t, j.Close())
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := bytes.SplitAfter(b, []byte("\n"))
		edits := 0
		for n, line := range lines {
			for _, e := range [][2]string{
				{`,"flag":"`, `,"class":"1","x":"`},
				{`,"class":"`, `,"class":"0`},
				{`,"in":`, `,"in":1`},
			} {
				if !bytes.Contains(line, []byte(e[0])) || !bytes.HasPrefix(line, []byte(`{"step":`)) {
					continue
				}
				edited := bytes.Clone(b)
				at := bytes.Index(edited, line) + bytes.Index(line, []byte(e[0]))
				edited = append(edited[:at:at], append([]byte(e[1]), edited[at+len(e[0]):]...)...)
				require.NoError(t, os.WriteFile(path, edited, 0o600))
				_, err := journalfile.Open(path, opts...)
				require.ErrorIs(t, err, journal.ErrCorrupt, "signed %v, line %d: %s", signed, n+1, e[0])
				assert.Contains(t, err.Error(), fmt.Sprintf("%s:%d ", path, n+1), "names the line")
				edits++
			}
			if edits >= 9 {
				break
			}
		}
		assert.GreaterOrEqual(t, edits, 3, "the journal had samples of each kind to edit")
		require.NoError(t, os.WriteFile(path, b, 0o600))
		j, err = journalfile.Open(path, opts...)
		require.NoError(t, err, "the file as written opens")
		require.NoError(t, j.Close())
	}
}

// TestJournalNoSamples: Journal.NoSamples keeps the step records without
// their samples (as a version 4 journal did), and the run is the same.
func TestJournalNoSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	j.NoSamples = true
	s, task := sampleSolver(t, j, nil)
	want, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"samples"`)
	assert.Equal(t, int(hanoi.TotalSteps(5)), bytes.Count(b, []byte(`{"step":`)))

	path = filepath.Join(t.TempDir(), "with.jsonl")
	j, err = journalfile.Create(path)
	require.NoError(t, err)
	s, task = sampleSolver(t, j, nil)
	got, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, int(hanoi.TotalSteps(5)), bytes.Count(b, []byte(`"samples":[`)), "by default every step keeps its samples")
	// Launched and Cancelled depend on timing under Speculate.
	assert.Equal(t, [3]int{want.Valid, want.Flagged, want.Errors}, [3]int{got.Valid, got.Flagged, got.Errors}, "the same run")
}

// v4FixtureKey keyed testdata/v4-hanoi6-keyed.jsonl; it is not a secret.
const v4FixtureKey = "v4 fixture key, not a secret"

// TestVersion4JournalResumes: journals of format version 4, the format
// before each step kept its samples, are read and resumed by this build
// and end with the uninterrupted run's result; they go on in version 4
// (their new steps without samples), so the build that began one can
// still finish it. testdata/v4-hanoi6.jsonl (unsigned) and
// v4-hanoi6-keyed.jsonl (under v4FixtureKey, with its chain head
// v4-hanoi6-keyed.head.json, as the state folder kept it) were written by
// main at 2c09ede: 6-disk Hanoi on the sim (seed 1), k 3, a checkpoint
// every 16 steps, stopped after 40 of its 63 steps (MaxSteps): a header,
// 40 step lines and 2 checkpoints. They are inputs, never to be written
// again by a later build.
func TestVersion4JournalResumes(t *testing.T) {
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
	want, _, err := solve(nil)
	require.NoError(t, err)

	for _, c := range []struct{ file, key string }{{"v4-hanoi6.jsonl", ""}, {"v4-hanoi6-keyed.jsonl", v4FixtureKey}} {
		state := filepath.Join(t.TempDir(), "state")
		t.Setenv(journal.StateDirEnv, state)
		t.Setenv(journal.KeyEnv, c.key)
		var opts []journal.Option
		if c.key == "" {
			opts = append(opts, journal.Unsigned())
		} else {
			head, err := os.ReadFile(filepath.Join("testdata", "v4-hanoi6-keyed.head.json"))
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Join(state, "journal-heads"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(state, "journal-heads", "ea2641323bbb2af469961a6993e8f5ce.json"), head, 0o600))
		}
		b, err := os.ReadFile(filepath.Join("testdata", c.file))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(b, []byte(`{"mdap_journal":4,`)), c.file)
		require.NotContains(t, string(b), `"samples"`)
		path := filepath.Join(t.TempDir(), c.file)
		require.NoError(t, os.WriteFile(path, b, 0o600))

		j, err := journalfile.Open(path, opts...)
		require.NoError(t, err, c.file)
		got, task, err := solve(j)
		require.NoError(t, err, c.file)
		require.NoError(t, j.Close())
		assert.True(t, task.Solved(), c.file)
		assert.Equal(t, 40, got.Resumed, c.file)
		assert.Equal(t, want.Steps, got.Steps, c.file)
		assert.Equal(t, want.Counts, got.Counts, c.file)
		assert.Equal(t, want.SampleHistogram, got.SampleHistogram, c.file)
		assert.Equal(t, want.Usage.InputTokens, got.Usage.InputTokens, c.file)

		after, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(after, b), "%s: appended to, nothing rewritten", c.file)
		assert.Equal(t, want.Steps-40, bytes.Count(after[len(b):], []byte(`{"step":`)), c.file)
		assert.NotContains(t, string(after), `"samples"`, "%s: goes on in version 4", c.file)

		j, err = journalfile.Open(path, opts...)
		require.NoError(t, err, c.file)
		again, task, err := solve(j)
		require.NoError(t, err, c.file)
		require.NoError(t, j.Close())
		assert.True(t, again.Done && task.Solved(), c.file)
		assert.Equal(t, strconv.Itoa(want.Steps), strconv.Itoa(again.Resumed), c.file)
	}
}
