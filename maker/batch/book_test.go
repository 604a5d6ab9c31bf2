package batch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/budget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bookStore is a results file in a fresh folder holding a's result at
// cost, reopened so that its spend file is read as a run's start reads it.
func bookStore(t *testing.T, spent float64, recorded ...Result) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.jsonl")
	s, err := OpenStore(path, "")
	require.NoError(t, err)
	for _, r := range recorded {
		require.NoError(t, s.Write(r))
	}
	if spent > 0 {
		require.NoError(t, s.SaveSpend(Spend{Spent: spent}))
	}
	require.NoError(t, s.Close())
	s, err = OpenStore(path, "")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// A Book credits what earlier runs spent (the spend file's, at least the
// results' cost; what no result holds ahead), saves the spend file when a
// task's unit closes and at the end, and counts results another
// coordinator recorded meanwhile.
func TestBookHoldsTheBudgetAcrossRuns(t *testing.T) {
	t.Parallel()
	jobs := []Job{{ID: "a", Line: 1}, {ID: "b", Line: 2}}
	store := bookStore(t, 1.0, Result{ID: "a", Line: 1, Status: StatusSolved, Cost: 0.3})
	budget := budget.New(2)
	book := OpenBook(budget, store, jobs)
	assert.InDelta(t, 1.0, budget.Spent(), 1e-12, "the recorded 0.3, and 0.7 ahead")
	budget.Credit(0.5) // b resumes, crediting its journaled steps
	assert.InDelta(t, 1.0, budget.Spent(), 1e-12, "taken from what was counted ahead, not twice")

	closed := false
	build := book.Wrap(func(context.Context, Job) (*Unit, error) {
		return &Unit{Close: func() error { closed = true; return nil }}, nil
	})
	u, err := build(context.Background(), jobs[1])
	require.NoError(t, err)
	require.NoError(t, os.Remove(store.SpendPath()))
	require.NoError(t, u.Close())
	assert.True(t, closed, "the unit's own Close runs")
	b, err := os.ReadFile(store.SpendPath())
	require.NoError(t, err, "closing a unit saves the spend file")
	assert.JSONEq(t, `{"spent": 1}`, string(b))

	require.NoError(t, store.Write(Result{ID: "b", Line: 2, Status: StatusSolved, Cost: 0.9})) // another coordinator's
	var sum Summary
	require.NoError(t, book.Finish(&sum, jobs, nil))
	assert.Zero(t, sum.Spent, "no call was made here")
	assert.InDelta(t, 1.2, sum.SpentTotal, 1e-12, "at least the results' cost")
	b, err = os.ReadFile(store.SpendPath())
	require.NoError(t, err)
	assert.JSONEq(t, `{"spent": 1.2}`, string(b))
}

// A save that failed is the run's error when it has none.
func TestBookFinishReportsAFailedSave(t *testing.T) {
	t.Parallel()
	jobs := []Job{{ID: "a", Line: 1}}
	store := bookStore(t, 0)
	book := OpenBook(budget.New(0), store, jobs)
	require.NoError(t, os.Mkdir(store.SpendPath()+".tmp", 0o700)) // the new file cannot be written
	var sum Summary
	assert.Error(t, book.Finish(&sum, jobs, nil))
	runErr := errors.New("the run's own")
	assert.Same(t, runErr, book.Finish(&sum, jobs, runErr))
}

// A Gauge counts what the store holds at the start, then each task as it
// runs and ends; a fault leaves the task queued, a build error counts it
// failed.
func TestGaugeFollowsTheTasks(t *testing.T) {
	t.Parallel()
	store := bookStore(t, 0, Result{ID: "a", Line: 1, Status: StatusSolved})
	jobs := []Job{{ID: "a", Line: 1}, {ID: "b", Line: 2, Err: errors.New("bad line")}, {ID: "c", Line: 3}, {ID: "d", Line: 4}, {ID: "e", Line: 5}}
	var mu sync.Mutex
	var got [][4]int
	last := func() [4]int { mu.Lock(); defer mu.Unlock(); return got[len(got)-1] }
	errFault := errors.New("engine down")
	g := NewGauge(func(queued, running, solved, failed int) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, [4]int{queued, running, solved, failed})
	}, func(err error) bool { return errors.Is(err, errFault) }, jobs, store)
	assert.Equal(t, [4]int{3, 0, 1, 1}, last(), "a recorded, b invalid")

	build := g.Wrap(func(_ context.Context, job Job) (*Unit, error) {
		switch job.ID {
		case "c":
			return &Unit{}, nil // a step loop: Finish says how it ended
		case "d":
			return &Unit{Run: func(context.Context, OwnRun, *Result) error { return errFault }}, nil
		}
		return nil, errors.New("spec file missing")
	})
	ctx := context.Background()
	c, err := build(ctx, jobs[2])
	require.NoError(t, err)
	assert.Equal(t, [4]int{2, 1, 1, 1}, last())
	c.Finish(&Result{Status: StatusSolved})
	assert.Equal(t, [4]int{1, 1, 2, 1}, last())
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	assert.Equal(t, [4]int{2, 0, 2, 1}, last(), "closed once")

	d, err := build(ctx, jobs[3])
	require.NoError(t, err)
	assert.Equal(t, [4]int{1, 1, 2, 1}, last())
	assert.ErrorIs(t, d.Run(ctx, OwnRun{}, &Result{}), errFault)
	require.NoError(t, d.Close())
	assert.Equal(t, [4]int{2, 0, 2, 1}, last(), "a fault: no result here, queued again")

	_, err = build(ctx, jobs[4])
	require.Error(t, err)
	assert.Equal(t, [4]int{1, 0, 2, 2}, last(), "the runner records it invalid")

	assert.Nil(t, NewGauge(nil, nil, jobs, store), "no metrics: no gauge")
	var none *Gauge
	u, err := none.Wrap(build)(ctx, jobs[2])
	require.NoError(t, err)
	assert.NotNil(t, u)
}
