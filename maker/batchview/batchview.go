// Package batchview shows a batch.Runner's batch in the run view
// (maker/view): its tasks by status, each task's step loop live as its
// Solver runs, and each result as it is recorded. It is what maker solve
// --ui serves; a library user running a batch with a view of it calls
// Attach the same way.
package batchview

import (
	"context"
	"fmt"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/view"
)

// Attach makes b show r's run of jobs: each job queued, or with the
// result store holds already, or invalid (a line that could not be read);
// then, through r.Build, running with its Solver's run live (a
// decomposition, which has no Solver, is counted by its result); and
// through r.Results, which Attach sets to write to store first, each
// result once recorded. info, if set, adds to each task's view.Info what
// the Solver does not say (a cap, a remote route). Call it once r is set
// and before r runs.
func Attach(b *view.Batch, jobs []batch.Job, store *batch.Store, r *batch.Runner, info func(view.Info) view.Info) {
	names := make(map[string]string, len(jobs)) // a job's key to its name
	for _, job := range jobs {
		name := TaskName(job.ID, job.Line)
		names[job.Key()] = name
		t := view.BatchTask{Name: name, ID: job.ID, Kind: job.Kind(), Line: job.Line, Status: view.StatusQueued}
		if res, ok := store.Done(job); ok {
			t.Status, t.Steps, t.Samples, t.Cost, t.Error = string(res.Status), res.Steps, res.Samples, res.Cost, res.Error
		} else if job.Err != nil {
			t.Status, t.Error = view.StatusInvalid, job.Err.Error()
		}
		b.Put(t, nil, nil)
	}
	if info == nil {
		info = func(i view.Info) view.Info { return i }
	}
	build := r.Build
	r.Build = func(ctx context.Context, job batch.Job) (*batch.Unit, error) {
		unit, err := build(ctx, job)
		name := names[job.Key()]
		t := view.BatchTask{Name: name, ID: job.ID, Kind: job.Kind(), Line: job.Line, Status: view.StatusRunning}
		if err != nil || unit == nil || unit.Solver == nil {
			b.Put(t, nil, nil) // a decomposition: counted by its result
			return unit, err
		}
		live := view.Attach(unit.Solver, info(view.SolverInfo(unit.Solver, unit.Task)))
		b.Put(t, live.Run(), live)
		return unit, nil
	}
	r.Results = results{store: store, batch: b, names: names}
}

// TaskName is a task's name in the batch view: its id, or its line.
func TaskName(id string, line int) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("line %d", line)
}

// results records a result in the store, then shows it in the view.
type results struct {
	store *batch.Store
	batch *view.Batch
	names map[string]string
}

func (w results) Write(res batch.Result) error {
	if err := w.store.Write(res); err != nil {
		return err
	}
	name, ok := w.names[res.Key()]
	if !ok {
		name = TaskName(res.ID, res.Line)
	}
	w.batch.Update(name, func(t *view.BatchTask) {
		t.Status, t.Steps, t.Samples, t.Cost, t.Error = string(res.Status), res.Steps, res.Samples, res.Cost, res.Error
	})
	return nil
}
