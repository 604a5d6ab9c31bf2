package batch

import (
	"context"
	"errors"
	"sync"
)

// Gauge keeps a batch's tasks by state (queued, running, solved, failed:
// the mdap_batch_tasks gauge of observe.Watcher.RecordBatch) while they
// run where no Runner reports the batch's Progress: when each task runs
// as a batch of one (maker solve --nats: cluster.SolveBatch reports the
// whole batch only at its end). It follows the tasks through the builder
// instead: a task is running from its Build until its Close, and done
// (solved, or failed) when it ends with a result. It counts what this
// coordinator sees: the results recorded before it started, and the
// tasks it solves; other coordinators' tasks count as queued until the
// end, when the batch's progress sets the whole batch's figures. Its
// methods are safe for concurrent use.
type Gauge struct {
	record func(queued, running, solved, failed int)
	fault  func(error) bool

	mu                             sync.Mutex
	tasks, running, solved, failed int
}

// RecordProgress is next (which may be nil) that first calls record with
// the batch's tasks by state, as a Gauge does: queued, running, solved,
// and failed (invalid lines included), for a Runner's Progress. A nil
// record gives next as it is.
func RecordProgress(record func(queued, running, solved, failed int), next func(Progress)) func(Progress) {
	if record == nil {
		return next
	}
	return func(p Progress) {
		if record(p.Tasks-p.Done-p.Running, p.Running, p.Solved, p.Failed+p.Invalid); next != nil {
			next(p)
		}
	}
}

// NewGauge returns the gauge of jobs with the results store holds
// already (and the invalid lines, which every coordinator records) set,
// and calls record with it; record is called again at every change, with
// the gauge's lock held. fault, if set, is a Runner.Fault: a task that
// ends with such an error gets no result here, so it stays queued. nil
// record gives a nil Gauge, whose Wrap returns the builder as it is.
func NewGauge(record func(queued, running, solved, failed int), fault func(error) bool, jobs []Job, store *Store) *Gauge {
	if record == nil {
		return nil
	}
	g := &Gauge{record: record, fault: fault, tasks: len(jobs)}
	for _, job := range jobs {
		res, done := store.Done(job)
		switch {
		case job.Err != nil, done && res.Status != StatusSolved:
			g.failed++
		case done:
			g.solved++
		}
	}
	g.set()
	return g
}

// set reports the gauge; called with mu held, or before any task runs.
func (g *Gauge) set() {
	done := g.solved + g.failed
	g.record(g.tasks-done-g.running, g.running, g.solved, g.failed)
}

func (g *Gauge) change(running int, status Status) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running += running
	switch status {
	case "":
	case StatusSolved:
		g.solved++
	default:
		g.failed++
	}
	g.set()
}

// Wrap returns build with each unit it builds followed: running until
// it is closed, done with its status when it finishes with a result. A
// build error (but a cancelled context) counts the task failed, as the
// runner records it invalid.
func (g *Gauge) Wrap(build Builder) Builder {
	if g == nil {
		return build
	}
	return func(ctx context.Context, job Job) (*Unit, error) {
		u, err := build(ctx, job)
		if err != nil || u == nil {
			if err != nil && ctx.Err() == nil {
				g.change(0, StatusInvalid) // the runner records it invalid
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
			w.Finish = func(r *Result) {
				if finish != nil {
					finish(r)
				}
				g.change(0, r.Status)
			}
		}
		if run := u.Run; run != nil {
			w.Run = func(ctx context.Context, o OwnRun, r *Result) error {
				err := run(ctx, o, r)
				stopped := err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
				if !stopped && !IsFault(err) && (g.fault == nil || !g.fault(err)) {
					status := r.Status
					if status == "" || err != nil {
						status = StatusFailed
					}
					g.change(0, status)
				}
				return err
			}
		}
		return &w, nil
	}
}
