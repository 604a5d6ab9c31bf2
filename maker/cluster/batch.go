package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/nats-io/nats.go/jetstream"
)

// BatchConfig is one coordinator's share of a batch spread over several
// coordinators: SolveBatch's arguments.
type BatchConfig struct {
	// Queue names the batch's task queue: every coordinator of one batch
	// gives the same name (for example a hash of the tasks file and the
	// settings), and no other batch uses it.
	Queue string
	// Jobs are the batch's tasks, as batch.ReadJobs gives them.
	Jobs []batch.Job
	// Runner is the local runner: its Build, Limits and Logger solve each
	// task taken here; its Store, Results, Done, Journal and Progress are
	// replaced per task.
	Runner batch.Runner
	// Store is this coordinator's results file: every task's result is
	// written to it at the end, whoever solved it.
	Store *batch.Store
	// MaxAge is the retention of the queue, its results and the tasks'
	// journals when they are created; 0 means DefaultRetention.
	MaxAge time.Duration
	// UnsignedJournals opts the tasks' journals out of signing (see
	// JournalConfig.Unsigned).
	UnsignedJournals bool
	// Concurrency is how many tasks this coordinator solves at once.
	Concurrency int
	// Drawer, if set, watches every task's solver (Drawer.Watch): the
	// Drawer the tasks' models draw through, so that a worker whose
	// answers lose far more often than its peers', over every task solved
	// here, is quarantined and given no more jobs of any task. Its
	// Quarantined lists them after the batch.
	Drawer *Drawer
	// Notef, if set, receives notes for the user (the queue, a task
	// handed back after an error, how many tasks were solved here).
	Notef func(format string, args ...any)
}

// resultsTimeout bounds reading the results back at the end.
const resultsTimeout = 30 * time.Second

// SolveBatch solves a batch together with every other coordinator that
// runs it with the same Queue: the tasks go to a TaskQueue, each
// coordinator takes tasks until every one has a result, each task's
// journal is on the engine (so a task whose coordinator dies is handed to
// another and resumes from its journal), and then every task's result, from
// whichever coordinator solved it, is written to cfg.Store. Each task is
// solved once. It returns the summary of the whole batch, as the local
// runner gives it (invalid lines recorded by every coordinator alike), and
// ctx.Err() when ctx ends first (run again to go on).
//
// Errors: the engine's (wrapping ErrEngine and friends), batch.ErrWrite
// for a result that could not be written, batch.ErrFault (naming the task
// and the cause) when a task taken here was stopped by a fault outside it:
// this coordinator then stops taking tasks, the task goes back on the
// queue, the results so far are written to cfg.Store and the summary
// counts the tasks without one as unfinished; ErrBudgetFull when a run
// key's budget refused a task, a result or a lease of its batch: this
// coordinator stops at once, naming the share that is full. Cost: one
// queue message and one result per task, plus the task's samples and
// journal on the engine.
func SolveBatch(ctx context.Context, js jetstream.JetStream, cfg BatchConfig) (batch.Summary, error) {
	began := time.Now()
	note := cfg.Notef
	if note == nil {
		note = func(string, ...any) {}
	}
	q, err := OpenTaskQueue(ctx, js, cfg.Queue, TaskQueueConfig{MaxAge: cfg.MaxAge})
	if err != nil {
		return batch.Summary{}, err
	}
	taskID := func(job batch.Job) string {
		sum := sha256.Sum256([]byte(job.Key()))
		return "t" + hex.EncodeToString(sum[:8])
	}
	byTask := map[string]batch.Job{}
	for _, job := range cfg.Jobs {
		if job.Err != nil {
			continue // recorded invalid below, by every coordinator alike
		}
		id := taskID(job)
		byTask[id] = job
		if _, done := cfg.Store.Done(job); done {
			continue
		}
		if err := q.Publish(ctx, id, []byte(job.Key())); err != nil {
			return batch.Summary{}, err
		}
	}
	note("tasks on queue %s; solving %d at a time with any other coordinator of this batch", cfg.Queue, cfg.Concurrency)

	// here counts the tasks solved here, resumed the steps they replayed
	// from their journals (a Result's Resumed does not travel).
	var here, resumed atomic.Int64
	solve := func(ctx context.Context, c *Claim) ([]byte, error) {
		job, ok := byTask[c.ID]
		if !ok {
			return nil, fmt.Errorf("task %s (%s) is not in this batch", c.ID, c.Data)
		}
		var res *batch.Result
		r := cfg.Runner
		r.Store, r.Concurrency, r.Progress = nil, 1, nil
		if d := cfg.Drawer; d != nil {
			build := r.Build
			r.Build = func(ctx context.Context, job batch.Job) (*batch.Unit, error) {
				u, err := build(ctx, job)
				if u != nil && u.Solver != nil {
					d.Watch(u.Solver)
				}
				return u, err
			}
		}
		r.Results = resultFunc(func(x batch.Result) error { res = &x; return nil })
		r.Done = func(batch.Job) (batch.Result, bool) { return batch.Result{}, false }
		jcfg := JournalConfig{WaitLock: DefaultLeaseTTL + 2*time.Second, MaxAge: cfg.MaxAge, Unsigned: cfg.UnsignedJournals}
		r.Journal = func(batch.Job) (*journal.Journal, error) {
			j, _, err := TaskJournal(ctx, js, cfg.Queue, c.ID, jcfg)
			return j, err
		}
		r.DecisionStore = func(batch.Job) (journal.Store, error) {
			return TaskDecisionStore(ctx, js, cfg.Queue, c.ID, jcfg)
		}
		r.UnsignedDecisions = cfg.UnsignedJournals
		if _, err := r.Run(ctx, []batch.Job{job}); res == nil {
			return nil, fmt.Errorf("%s: no result: %w", job.Where(), err)
		}
		here.Add(1)
		resumed.Add(int64(res.Resumed))
		return json.Marshal(res)
	}
	// A task stopped by a fault outside it (batch.ErrFault: a provider
	// that fails every draw, no worker on the route, a full disk) stops
	// this coordinator's batch, as it stops a local one: taking the task
	// again would meet the same fault, every second, forever. The task is
	// back on the queue for the same command once the fault is fixed.
	serveCtx, stopServing := context.WithCancelCause(ctx)
	defer stopServing(nil)
	serveErr := q.Serve(serveCtx, cfg.Concurrency, solve, func(c *Claim, err error) {
		// So does a run key's full budget (its result bucket refused
		// the result): no retry makes room.
		if errors.Is(err, batch.ErrFault) || errors.Is(err, ErrBudgetFull) {
			stopServing(err)
			return
		}
		note("task %s handed back: %v", c.Data, err)
	})
	// A fault ends the batch as it ends a local one: the results so far
	// are written and the summary counts the rest unfinished.
	var fault error
	switch {
	case serveErr == nil || ctx.Err() != nil:
	case errors.Is(serveErr, batch.ErrFault):
		fault = serveErr
	default:
		return batch.Summary{}, serveErr
	}

	// After a fault the results are a courtesy: an engine that is gone
	// (the fault may be its outage) is not waited for, and its error
	// does not replace the fault's, which names the task and what to do.
	var results map[string][]byte
	if fault == nil || js.Conn().IsConnected() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resultsTimeout)
		defer cancel()
		results, err = q.Results(rctx)
		if err != nil && fault == nil {
			return batch.Summary{}, err
		}
	}
	written := 0
	for id, job := range byTask {
		raw, ok := results[id]
		if _, done := cfg.Store.Done(job); done || !ok {
			continue
		}
		var res batch.Result
		if err := json.Unmarshal(raw, &res); err != nil {
			return batch.Summary{}, fmt.Errorf("%w: the result of %s: %w", ErrUndecodable, job.Where(), err)
		}
		if err := cfg.Store.Write(res); err != nil {
			return batch.Summary{}, fmt.Errorf("%w: %s: %w", batch.ErrWrite, job.Where(), err)
		}
		written++
	}
	noun := "tasks"
	if here.Load() == 1 {
		noun = "task"
	}
	if fault != nil {
		held := 0
		for _, job := range byTask {
			if _, done := cfg.Store.Done(job); done {
				held++
			}
		}
		note("%d %s solved here; %s in %s", here.Load(), noun, resultCount(held), cfg.Store.Path())
	} else {
		note("%d %s solved here, every result in %s", here.Load(), noun, cfg.Store.Path())
	}
	// Every task has its result now (unless interrupted or stopped by a
	// fault): the local runner records the invalid lines, skips the rest
	// and sums it all up; the results of this batch are not an earlier
	// run's. After a fault it must run nothing: under an ended context it
	// only counts the tasks without a result as unfinished.
	r := cfg.Runner
	r.Store = cfg.Store
	runCtx := ctx
	if fault != nil {
		var end context.CancelFunc
		runCtx, end = context.WithCancel(ctx)
		end()
	}
	sum, err := r.Run(runCtx, cfg.Jobs)
	sum.Skipped -= written
	// This run's: the local runner only read the results back.
	sum.Resumed += int(resumed.Load())
	sum.WallSeconds = time.Since(began).Seconds()
	if fault != nil && !errors.Is(err, batch.ErrWrite) {
		return sum, fault
	}
	return sum, err
}

// resultCount says how many results a results file holds: "no result",
// "1 result", "N results".
func resultCount(n int) string {
	switch n {
	case 0:
		return "no result"
	case 1:
		return "1 result"
	}
	return fmt.Sprintf("%d results", n)
}

// resultFunc adapts a function to batch.Runner.Results.
type resultFunc func(batch.Result) error

func (w resultFunc) Write(r batch.Result) error { return w(r) }
