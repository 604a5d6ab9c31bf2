package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A coordinator killed mid-run (its connection gone, its lease left to
// expire) is resumed by another from the journal on the engine: the same
// steps and totals as an uninterrupted run, no step twice.
func TestJournalOnEngineResumesOnAnotherCoordinator(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ctx := context.Background()
	cfg := vote.Config{K: 3, Parallel: 3}
	want, wantSteps := solveHanoi(t, simModel(t, 3), 5, cfg)

	nc1, js1 := connect(t, srv.ClientURL())
	j, err := cluster.CreateJournal(ctx, js1, "run-1", cluster.JournalConfig{LeaseTTL: deadTTL, Owner: "first"})
	require.NoError(t, err)
	assert.Equal(t, "nats:run-1", j.Path())
	j.CheckpointEvery = 7 // the resume starts from a checkpoint, mid-stream
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	task, err := hanoi.New(5)
	require.NoError(t, err)
	s := &maker.Solver{
		Config:  maker.Config{Vote: cfg},
		Model:   simModel(t, 3),
		Journal: j,
		Progress: func(e maker.Event) {
			if e.Step == 17 {
				cancel()
			}
		},
	}
	_, err = s.Solve(runCtx, task)
	require.ErrorIs(t, err, context.Canceled)
	nc1.Close() // dies: the lease is neither refreshed nor released

	_, js2 := connect(t, srv.ClientURL())
	_, err = cluster.OpenJournal(ctx, js2, "run-1", cluster.JournalConfig{})
	require.ErrorIs(t, err, journal.ErrLocked, "the dead coordinator's lease still holds")
	assert.Contains(t, err.Error(), `"first"`)
	j2, err := cluster.OpenJournal(ctx, js2, "run-1", cluster.JournalConfig{WaitLock: 6 * deadTTL})
	require.NoError(t, err, "the lease expired")
	task2, err := hanoi.New(5)
	require.NoError(t, err)
	var gotSteps []step
	s2 := &maker.Solver{
		Config:  maker.Config{Vote: cfg},
		Model:   simModel(t, 3),
		Journal: j2,
		Progress: func(e maker.Event) {
			r := e.Record
			gotSteps = append(gotSteps, step{Winner: r.Winner.Value, Key: r.Key, Votes: r.Votes, Valid: r.Valid, Flagged: r.Flagged, Errors: r.Errors, Flags: r.Flags})
		},
	}
	got, err := s2.Solve(ctx, task2)
	require.NoError(t, err)
	require.NoError(t, j2.Close())
	require.True(t, task2.Solved())
	assert.Equal(t, 18, got.Resumed)
	assert.Equal(t, wantSteps[14:], gotSteps, "steps from the checkpoint at 14 on") // replayed from the checkpoint, then decided
	assert.Equal(t, want.Steps, got.Steps)
	assert.Equal(t, want.Valid, got.Valid)
	assert.Equal(t, want.Flagged, got.Flagged)
	assert.Equal(t, want.Errors, got.Errors)
	assert.Equal(t, want.SampleHistogram, got.SampleHistogram)
	assert.Equal(t, want.Usage.OutputTokens, got.Usage.OutputTokens)

	// The exported journal is a journal file: every step once, and a
	// file journal of the finished run resumes as done.
	var buf bytes.Buffer
	require.NoError(t, cluster.ExportJournal(ctx, js2, "run-1", &buf))
	assert.Equal(t, 31, countSteps(t, buf.Bytes()))
	path := filepath.Join(t.TempDir(), "run-1.jsonl")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	fj, err := journalfile.Open(path)
	require.NoError(t, err)
	task3, err := hanoi.New(5)
	require.NoError(t, err)
	rep, err := (&maker.Solver{Config: maker.Config{Vote: cfg}, Model: simModel(t, 3), Journal: fj}).Solve(ctx, task3)
	require.NoError(t, err)
	require.NoError(t, fj.Close())
	assert.True(t, task3.Solved())
	assert.Equal(t, 31, rep.Resumed)
}

// countSteps counts the decided steps of a journal, failing on a step
// written twice.
func countSteps(t *testing.T, journal []byte) int {
	t.Helper()
	seen := map[int]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(journal)), "\n")[1:] {
		var r struct {
			Step    *int `json:"step"`
			Pending bool `json:"pending"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		if r.Step != nil && !r.Pending {
			require.False(t, seen[*r.Step], "step %d twice", *r.Step)
			seen[*r.Step] = true
		}
	}
	return len(seen)
}

func TestJournalOnEngineLocksAndRefuses(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ctx := context.Background()
	_, js := connect(t, srv.ClientURL())

	_, err := cluster.CreateJournal(ctx, js, "no.dots", cluster.JournalConfig{})
	require.ErrorIs(t, err, cluster.ErrConfig)
	_, err = cluster.OpenJournal(ctx, js, "missing", cluster.JournalConfig{})
	require.ErrorIs(t, err, journal.ErrPath)

	j, err := cluster.CreateJournal(ctx, js, "r", cluster.JournalConfig{Owner: "alice"})
	require.NoError(t, err)
	_, err = cluster.OpenJournal(ctx, js, "r", cluster.JournalConfig{})
	require.ErrorIs(t, err, journal.ErrLocked)
	assert.Contains(t, err.Error(), `"alice"`)
	require.ErrorIs(t, cluster.DeleteJournal(ctx, js, "r", cluster.JournalConfig{}), journal.ErrLocked, "never deleted under its coordinator")

	task, err := hanoi.New(2)
	require.NoError(t, err)
	_, err = (&maker.Solver{Model: simModel(t, 1), Journal: j}).Solve(ctx, task)
	require.NoError(t, err)
	require.NoError(t, j.Close())

	// Closed: the lease is released at once, no TTL to wait for.
	_, err = cluster.CreateJournal(ctx, js, "r", cluster.JournalConfig{})
	require.ErrorIs(t, err, journal.ErrExists)
	j, err = cluster.OpenJournal(ctx, js, "r", cluster.JournalConfig{})
	require.NoError(t, err)
	task, err = hanoi.New(3)
	require.NoError(t, err)
	_, err = (&maker.Solver{Model: simModel(t, 1), Journal: j}).Solve(ctx, task)
	require.ErrorIs(t, err, journal.ErrMismatch, "another task")
	require.NoError(t, j.Close())

	require.NoError(t, cluster.DeleteJournal(ctx, js, "r", cluster.JournalConfig{}))
	_, err = cluster.OpenJournal(ctx, js, "r", cluster.JournalConfig{})
	require.ErrorIs(t, err, journal.ErrPath)
	st, err := js.Stream(ctx, cluster.JournalsStream)
	require.NoError(t, err)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("mdap.journals.r"))
	require.NoError(t, err)
	assert.Empty(t, info.State.Subjects, "no line of the deleted journal is left")
}
