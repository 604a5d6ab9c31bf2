package maker

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
)

// The journal's durability promise (see journal.Journal): steps are buffered and
// written with the periodic sync, every SyncEvery steps or WriteEvery
// after the last write; the buffer is written and synced before a
// side-effect call and written right after its step; the run's end writes
// it. A kill loses at most the unwritten steps, which a resume decides
// again identically.

// TestJournalWritesWithTheSync reads the file as a SIGKILL would leave it
// (the buffer is in the process's memory) after every step: it holds the
// steps up to the last multiple of SyncEvery, and every step once Solve
// returns.
func TestJournalWritesWithTheSync(t *testing.T) {
	for _, every := range []int{1, 8} {
		path := filepath.Join(t.TempDir(), "j.jsonl")
		j, err := journalfile.Create(path)
		require.NoError(t, err)
		j.SyncEvery, j.WriteEvery = every, -1
		var seen []int
		s := &Solver{Model: &scripted{reply: noisy}, Journal: j, Progress: func(e Event) {
			seen = append(seen, countSteps(t, path))
			assert.Equal(t, (e.Step+1)/every*every, seen[len(seen)-1], "every %d, after step %d", every, e.Step)
		}}
		_, err = s.Solve(context.Background(), &counter{target: 20})
		require.NoError(t, err)
		assert.Equal(t, 20, countSteps(t, path), "the run's end writes the buffer, before Close")
		require.NoError(t, j.Close())
		assert.Len(t, seen, 20)
	}
}

// TestJournalWritesSlowStepsAtOnce: a step that ends WriteEvery after the
// last write is written before the next starts (a real model's steps
// take seconds; a kill then loses none of them).
func TestJournalWritesSlowStepsAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	j.WriteEvery = time.Nanosecond // every step is slower than that
	s := &Solver{Model: &scripted{reply: noisy}, Journal: j, Progress: func(e Event) {
		assert.Equal(t, e.Step+1, countSteps(t, path), "step %d", e.Step)
	}}
	_, err = s.Solve(context.Background(), &counter{target: 10})
	require.NoError(t, err)
	require.NoError(t, j.Close())
}

// TestJournalCancelWritesTheBuffer: an interrupted run (ctx cancelled)
// leaves every decided step in the file.
func TestJournalCancelWritesTheBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	j.WriteEvery = -1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &Solver{Model: &scripted{reply: noisy}, Journal: j, Progress: func(e Event) {
		if e.Step == 12 {
			cancel()
		}
	}}
	rep, err := s.Solve(ctx, &counter{target: 40})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 13, rep.Steps)
	assert.Equal(t, 13, countSteps(t, path), "written when Solve returns")
	require.NoError(t, j.Close())
}

// sameResult compares what a run decided, leaving out time and the
// resumed count.
func sameDecisions(t *testing.T, want, got Report, msg string) {
	t.Helper()
	want.Wall, got.Wall, want.StepTime, got.StepTime, want.Resumed, got.Resumed = 0, 0, 0, 0, 0, 0
	want.Usage.Latency, got.Usage.Latency = 0, 0
	for _, ms := range [][]ModelReport{want.Models, got.Models} {
		for i := range ms {
			ms[i].Usage.Latency = 0
		}
	}
	assert.Equal(t, want, got, msg)
}

// winners returns each complete step line's winner, key and votes.
func winners(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, line := range bytes.Split(bytes.TrimSpace(mustRead(t, path)), []byte("\n"))[1:] {
		var r journal.StepRecord
		require.NoError(t, json.Unmarshal(line, &r))
		if r.Pending {
			continue
		}
		r.Usage.Latency = 0
		if r.Observation != nil {
			r.Observation.Duration = 0
		}
		b, err := json.Marshal([]any{r.Step, r.Winner, r.Key, r.Votes, r.Counts, r.Usage, r.Observation})
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// TestKillMidBatchResumesToTheSameResult takes the file as a SIGKILL
// leaves it at every step of a run (steps buffered, not yet written),
// and resumes each copy: every resume verifies the hash chain (keyed
// here), decides the lost steps again, and ends with the uninterrupted
// run's result and journal, each step once.
func TestKillMidBatchResumesToTheSameResult(t *testing.T) {
	t.Setenv(journal.KeyEnv, "0123456789abcdef0123456789abcdef")
	const target, every = 30, 8
	dir := t.TempDir()
	path := filepath.Join(dir, "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	j.SyncEvery, j.WriteEvery = every, -1
	var kills [][]byte
	s := &Solver{
		Config:  Config{Vote: vote.Config{K: 2}},
		Model:   &scripted{reply: noisy},
		Journal: j,
		Progress: func(e Event) {
			kills = append(kills, mustRead(t, path))
		},
	}
	task := &counter{target: target}
	want, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	wantLines := winners(t, path)
	require.Len(t, wantLines, target)

	lost := 0
	for i, b := range kills {
		p := filepath.Join(dir, "kill.jsonl")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		asCrashed(t, p)
		lost += i + 1 - countSteps(t, p)
		j, err := journalfile.Open(p)
		require.NoError(t, err, "kill after step %d: the chain verifies", i)
		task := &counter{target: target}
		got, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), task)
		require.NoError(t, err)
		require.NoError(t, j.Close())
		assert.Equal(t, target, task.n)
		assert.Zero(t, task.wrong)
		sameDecisions(t, want, got, "kill after step "+p)
		assert.Equal(t, wantLines, winners(t, p), "kill after step %d", i)
		_, err = journalfile.Open(p) // the finished journal verifies too
		require.NoError(t, err)
		require.NoError(t, os.Remove(p))
	}
	assert.Positive(t, lost, "some kills fell mid-batch")
}

// sideEffectExecutor runs a deploy tool (category bash: a side effect)
// that calls check before it runs.
func sideEffectExecutor(t *testing.T, runs *atomic.Int64, check func()) *executor.Executor {
	t.Helper()
	tax := categories.Builtin()
	require.NoError(t, tax.Add("deploy", categories.Bash))
	deploy := executor.NewTool("deploy", categories.Bash, "deploys", json.RawMessage(`{"type":"object","properties":{"target":{"type":"string"}},"required":["target"],"additionalProperties":false}`),
		func(ctx context.Context, args map[string]any) (string, error) {
			check()
			runs.Add(1)
			return "deployed to " + args["target"].(string), nil
		})
	ex, err := executor.New(executor.WithTaxonomy(tax), executor.WithPolicy(categories.Policy{Allow: []string{"deploy"}}), executor.WithTools(deploy))
	require.NoError(t, err)
	return ex
}

// TestSideEffectNeverRunsTwiceAcrossAKill: the side effect at step 2 runs
// with every step before it and its pending record in the file, and its
// complete record is written before the next step starts; a kill at any
// later step (mid-batch) resumes without running it again, to the
// uninterrupted result.
func TestSideEffectNeverRunsTwiceAcrossAKill(t *testing.T) {
	const target = 12
	dir := t.TempDir()
	path := filepath.Join(dir, "j.jsonl")
	var runs atomic.Int64
	ex := sideEffectExecutor(t, &runs, func() {
		b := mustRead(t, path)
		assert.Equal(t, 2, countSteps(t, path), "every step before the side effect is in the file")
		assert.Contains(t, string(b), `{"step":2,"pending":true`, "and its pending record")
	})
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	j.WriteEvery = -1 // SyncEvery 64: no periodic write in this run
	var kills [][]byte
	s := &Solver{
		Config:   Config{Vote: vote.Config{K: 2}},
		Model:    &scripted{reply: toolAtStep2},
		Executor: ex,
		Journal:  j,
		Progress: func(e Event) {
			kills = append(kills, mustRead(t, path))
			if e.Step == 2 {
				assert.Equal(t, 3, countSteps(t, path), "the side effect's step is written at once")
			}
		},
	}
	want, err := s.Solve(context.Background(), &counter{target: target})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	require.EqualValues(t, 1, runs.Load())
	wantLines := winners(t, path)

	for i := 2; i < len(kills); i++ {
		p := filepath.Join(dir, "kill.jsonl")
		require.NoError(t, os.WriteFile(p, kills[i], 0o644))
		asCrashed(t, p)
		assert.Equal(t, 3, countSteps(t, p), "kill after step %d: the steps after the side effect are still buffered", i)
		var again atomic.Int64
		j, err := journalfile.Open(p)
		require.NoError(t, err)
		got, err := (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: toolAtStep2}, Executor: sideEffectExecutor(t, &again, func() {}), Journal: j}).Solve(context.Background(), &counter{target: target})
		require.NoError(t, err, "kill after step %d", i)
		require.NoError(t, j.Close())
		assert.Zero(t, again.Load(), "kill after step %d: the side effect never runs twice", i)
		sameDecisions(t, want, got, "resumed")
		assert.Equal(t, wantLines, winners(t, p))
		require.NoError(t, os.Remove(p))
	}
}

// TestJournalSyncsAtMostEverySyncPeriod counts the syncs of a store: a
// periodic write syncs only when SyncPeriod has passed since the last
// sync (the first write syncs), or at every write with a negative period;
// a signed journal's header is synced when it begins (its chain head is
// then recorded); Close syncs once more.
func TestJournalSyncsAtMostEverySyncPeriod(t *testing.T) {
	for _, c := range []struct {
		period time.Duration
		want   int
	}{{time.Hour, 1 + 1 + 1}, {-1, 1 + 40/8 + 1}} {
		store := &statetest.MemStore{}
		j, err := journal.New(store)
		require.NoError(t, err)
		j.SyncEvery, j.WriteEvery, j.SyncPeriod = 8, -1, c.period
		_, err = (&Solver{Model: &scripted{reply: noisy}, Journal: j}).Solve(context.Background(), &counter{target: 40})
		require.NoError(t, err)
		require.NoError(t, j.Close())
		assert.Equal(t, c.want, store.Syncs, "period %s", c.period)
	}
}

// TestJournalDefaultBatch: with SyncEvery left at 0 a file journal writes
// every journal.DefaultSyncEvery (256) steps, as a SIGKILL would find the file
// after each step, and the run's end writes the rest; its buffer holds a
// batch of 20-disk Hanoi lines (about 450 bytes each), so the batch is
// one write(2).
func TestJournalDefaultBatch(t *testing.T) {
	require.Equal(t, 256, journal.DefaultSyncEvery)
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	j.WriteEvery = -1 // steps, not time
	checked := 0
	s := &Solver{Model: &scripted{reply: noisy}, Journal: j, Progress: func(e Event) {
		switch e.Step {
		case 0, journal.DefaultSyncEvery - 2, 2*journal.DefaultSyncEvery - 2:
			assert.Equal(t, e.Step/journal.DefaultSyncEvery*journal.DefaultSyncEvery, countSteps(t, path), "after step %d: nothing more written", e.Step)
			checked++
		case journal.DefaultSyncEvery - 1, 2*journal.DefaultSyncEvery - 1:
			assert.Equal(t, e.Step+1, countSteps(t, path), "after step %d: the batch written", e.Step)
			checked++
		}
	}}
	_, err = s.Solve(context.Background(), &counter{target: 2*journal.DefaultSyncEvery + 10})
	require.NoError(t, err)
	assert.Equal(t, 5, checked)
	assert.Equal(t, 2*journal.DefaultSyncEvery+10, countSteps(t, path), "the run's end writes the buffer")
	require.NoError(t, j.Close())
}
