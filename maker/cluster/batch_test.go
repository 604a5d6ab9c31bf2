package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// refusingModel refuses every call for good, as a provider does with a
// wrong key: a fault outside the task (batch.IsFault). Its identity is
// the model's it stands for: fixing a key changes no setting.
// before, if set, runs first in each call.
type refusingModel struct {
	id     string
	before func()
}

func (m refusingModel) Identity() string { return m.id }

func (m refusingModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	if m.before != nil {
		m.before()
	}
	return nil, fmt.Errorf("%w: 401 invalid key", maker.ErrPermanent)
}

func (refusingModel) Call(context.Context, string, ...llms.CallOption) (string, error) {
	return "", fmt.Errorf("%w: 401 invalid key", maker.ErrPermanent)
}

// TestSolveBatchFaultKeepsWhatWasSolved: docs/batch.md says a fault
// outside a task stops the batch, "the stopped tasks get no line", and the
// same command finishes them; a local batch records every task that ended
// before the fault and counts the rest unfinished. SolveBatch does the
// same: task "a", solved before task "b" met its provider's fault, has its
// line in the results file when SolveBatch returns the fault, and the
// summary counts both tasks (one solved, one unfinished), not nothing.
// The same call with the fault fixed finishes "b" alone.
func TestSolveBatchFaultKeepsWhatWasSolved(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	dir := t.TempDir()
	jobs, err := batch.ReadJobs(strings.NewReader(`{"id": "a", "hanoi": {"disks": 3}, "seed": 1}
{"id": "b", "hanoi": {"disks": 3}, "seed": 2}
`), dir)
	require.NoError(t, err)
	var fixed atomic.Bool
	runner := batch.Runner{Build: (&batch.Builtin{Model: func(job batch.Job, o sim.Oracle, seed uint64) (llms.Model, error) {
		c := sim.DefaultConfig()
		c.Seed, c.P = seed, 0.97
		m, err := sim.New(o, c)
		if err == nil && job.ID == "b" && !fixed.Load() {
			return refusingModel{id: m.Identity()}, nil
		}
		return m, err
	}}).Build}
	solve := func() (batch.Summary, error) {
		store, err := batch.OpenStore(filepath.Join(dir, "results.jsonl"), "")
		require.NoError(t, err)
		defer func() { require.NoError(t, store.Close()) }()
		return cluster.SolveBatch(context.Background(), js, cluster.BatchConfig{
			Queue: "fault", Jobs: jobs, Runner: runner, Store: store, Concurrency: 1,
		})
	}

	sum, err := solve()
	require.ErrorIs(t, err, batch.ErrFault)
	require.ErrorIs(t, err, maker.ErrPermanent)
	assert.Contains(t, err.Error(), `"b"`, "the task is named")
	got := readResultIDs(t, filepath.Join(dir, "results.jsonl"))
	assert.Equal(t, map[string]batch.Status{"a": batch.StatusSolved}, got, "a's line is written; the stopped task gets none")
	assert.Equal(t, 2, sum.Tasks, "%+v", sum)
	assert.Equal(t, 1, sum.Solved, "%+v", sum)
	assert.Equal(t, 1, sum.Unfinished, "%+v", sum)
	assert.Zero(t, sum.Failed, "%+v", sum)

	fixed.Store(true)
	sum, err = solve()
	require.NoError(t, err)
	got = readResultIDs(t, filepath.Join(dir, "results.jsonl"))
	assert.Equal(t, map[string]batch.Status{"a": batch.StatusSolved, "b": batch.StatusSolved}, got)
	assert.Equal(t, 2, sum.Solved, "%+v", sum)
	assert.Zero(t, sum.Unfinished, "%+v", sum)
}

// readResultIDs returns each result's status by task id; a task recorded
// twice fails the test.
func readResultIDs(t *testing.T, path string) map[string]batch.Status {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]batch.Status{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r batch.Result
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		_, dup := out[r.ID]
		require.False(t, dup, "%s recorded twice", r.ID)
		out[r.ID] = r.Status
	}
	return out
}

// TestSolveBatchFaultSurvivesTheEngineGoing: the results written after a
// fault are a courtesy; an engine gone by then (the fault was its outage,
// say; here the connection is closed) does not replace the fault, which
// names the task and what to do, with an error about reading the results.
func TestSolveBatchFaultSurvivesTheEngineGoing(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	nc, js := connect(t, srv.ClientURL())
	dir := t.TempDir()
	jobs, err := batch.ReadJobs(strings.NewReader(`{"id": "b", "hanoi": {"disks": 3}, "seed": 2}`+"\n"), dir)
	require.NoError(t, err)
	runner := batch.Runner{Build: (&batch.Builtin{Model: func(job batch.Job, o sim.Oracle, seed uint64) (llms.Model, error) {
		c := sim.DefaultConfig()
		c.Seed = seed
		m, err := sim.New(o, c)
		if err != nil {
			return nil, err
		}
		return refusingModel{id: m.Identity(), before: nc.Close}, nil // the engine goes with the fault
	}}).Build}
	store, err := batch.OpenStore(filepath.Join(dir, "results.jsonl"), "")
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	sum, err := cluster.SolveBatch(context.Background(), js, cluster.BatchConfig{Queue: "gone", Jobs: jobs, Runner: runner, Store: store, Concurrency: 1})
	require.ErrorIs(t, err, batch.ErrFault)
	require.ErrorIs(t, err, maker.ErrPermanent)
	assert.Contains(t, err.Error(), `"b"`, "the task is named")
	assert.Equal(t, 1, sum.Unfinished, "%+v", sum)
}
