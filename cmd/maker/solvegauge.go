package main

import (
	"context"
	"errors"
	"sync"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/observe"
)

// natsGauge keeps the batch gauge (mdap_batch_tasks) of maker solve
// --nats while its tasks run. cluster.SolveBatch runs each task it takes
// as a batch of one, without the batch's Progress, and reports the whole
// batch only at its end; the gauge follows the tasks through the builder
// instead: a task is running from its Build until its Close, and done
// (solved, or failed) when it ends with a result. It counts what this
// coordinator sees: the results recorded before it started, and the
// tasks it solves; other coordinators' tasks count as queued until the
// end, when the batch's progress sets the whole batch's figures.
type natsGauge struct {
	o *observe.Watcher

	mu                             sync.Mutex
	tasks, running, solved, failed int
}

// newNATSGauge returns the gauge of jobs with the results store holds
// already (and the invalid lines, which every coordinator records) set;
// nil when metrics are off.
func newNATSGauge(o *observe.Watcher, jobs []batch.Job, store *batch.Store) *natsGauge {
	if o == nil {
		return nil
	}
	g := &natsGauge{o: o, tasks: len(jobs)}
	for _, job := range jobs {
		res, done := store.Done(job)
		switch {
		case job.Err != nil, done && res.Status != batch.StatusSolved:
			g.failed++
		case done:
			g.solved++
		}
	}
	g.record()
	return g
}

// record sets the gauge; called with mu held, or before any task runs.
func (g *natsGauge) record() {
	done := g.solved + g.failed
	g.o.RecordBatch(context.Background(), g.tasks-done-g.running, g.running, g.solved, g.failed)
}

func (g *natsGauge) change(running int, status batch.Status) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running += running
	switch status {
	case "":
	case batch.StatusSolved:
		g.solved++
	default:
		g.failed++
	}
	g.record()
}

// wrap returns build with each unit it builds followed: running until
// it is closed, done with its status when it finishes with a result.
func (g *natsGauge) wrap(build batch.Builder) batch.Builder {
	if g == nil {
		return build
	}
	return func(ctx context.Context, job batch.Job) (*batch.Unit, error) {
		u, err := build(ctx, job)
		if err != nil || u == nil {
			if err != nil && ctx.Err() == nil {
				g.change(0, batch.StatusInvalid) // the runner records it invalid
			}
			return u, err
		}
		g.change(1, "")
		var once sync.Once
		stop := func() { once.Do(func() { g.change(-1, "") }) }
		w := *u
		if close := u.Close; close != nil {
			w.Close = func() error { defer stop(); return close() }
		} else {
			w.Close = func() error { stop(); return nil }
		}
		if finish := u.Finish; u.Run == nil {
			w.Finish = func(r *batch.Result) {
				if finish != nil {
					finish(r)
				}
				g.change(0, r.Status)
			}
		}
		if run := u.Run; run != nil {
			w.Run = func(ctx context.Context, o batch.OwnRun, r *batch.Result) error {
				err := run(ctx, o, r)
				stopped := err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
				if !stopped && !batch.IsFault(err) && !engineFault(err) {
					status := r.Status
					if status == "" || err != nil {
						status = batch.StatusFailed
					}
					g.change(0, status)
				}
				return err
			}
		}
		return &w, nil
	}
}
