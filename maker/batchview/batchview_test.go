package batchview_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/batchview"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/view"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func statuses(b *view.Batch) map[string]string {
	out := map[string]string{}
	for _, t := range b.Stats().List {
		out[t.Name] = t.Status
	}
	return out
}

// Attach shows the recorded, invalid and queued tasks at once, each
// run's Solver live while it runs (with what info adds), and each result
// once the store holds it.
func TestAttachFollowsARunner(t *testing.T) {
	t.Parallel()
	store, err := batch.OpenStore(filepath.Join(t.TempDir(), "results.jsonl"), "")
	require.NoError(t, err)
	defer store.Close()
	hj := &batch.HanoiJob{Disks: 3}
	jobs := []batch.Job{{ID: "done", Line: 1, Hanoi: hj}, {Line: 2, Err: errors.New("not JSON")}, {ID: "run", Line: 3, Hanoi: hj}}
	require.NoError(t, store.Write(batch.Result{ID: "done", Line: 1, Status: batch.StatusSolved, Steps: 7}))

	b := view.NewBatch("tasks.jsonl", 0)
	var live *view.Run
	r := batch.Runner{Store: store, Concurrency: 1, Build: func(context.Context, batch.Job) (*batch.Unit, error) {
		task, err := hanoi.New(3)
		if err != nil {
			return nil, err
		}
		m, err := sim.New(hanoi.Oracle{}, sim.Config{P: 1})
		if err != nil {
			return nil, err
		}
		s := &maker.Solver{Model: m}
		s.Progress = func(maker.Event) {
			if live == nil {
				live, _, _ = b.Task("run")
			}
		}
		return &batch.Unit{Task: task, Solver: s}, nil
	}}
	batchview.Attach(b, jobs, store, &r, func(i view.Info) view.Info { i.Remote = "over the test"; return i })
	assert.Equal(t, map[string]string{"done": "solved", "line 2": view.StatusInvalid, "run": view.StatusQueued}, statuses(b))

	sum, err := r.Run(context.Background(), jobs)
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Solved, "the recorded task and the one run")
	require.NotNil(t, live, "the running task's Solver was shown live")
	assert.Equal(t, "over the test", live.Stats().Remote, "info adds to the Solver's own")
	assert.Equal(t, map[string]string{"done": "solved", "line 2": view.StatusInvalid, "run": "solved"}, statuses(b))
	res, ok := store.Done(jobs[2])
	require.True(t, ok, "the result is written to the store first")
	assert.Equal(t, 7, res.Steps)
	assert.Equal(t, 7+7, b.Stats().Steps)
}

func TestTaskName(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "h3", batchview.TaskName("h3", 4))
	assert.Equal(t, "line 4", batchview.TaskName("", 4))
}
