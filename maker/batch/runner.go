package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/budget"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/sourcegraph/conc/panics"
	"github.com/tmc/langchaingo/llms"
	"golang.org/x/sync/errgroup"
)

// Runner errors, for errors.Is.
var (
	// ErrConfig is wrapped by every error about a configuration value: a
	// Runner's fields, a LimitConfig. The message names the field.
	ErrConfig = fielderr.ErrConfig
	// ErrJobPanic: a Builder, a Unit's Finish or Close, or the runner's
	// handling of a job panicked; the job is reported failed with it.
	ErrJobPanic = errors.New("job panicked")
	// ErrWrite wraps a result that could not be recorded. It stops the
	// batch: the tasks still running are cancelled (they resume from
	// their journals), and no later result is written.
	ErrWrite = errors.New("result could not be recorded")
)

// Unit is a job made ready to run: its task and the solver that runs it.
type Unit struct {
	// Task and Solver are required. The runner runs a copy of the
	// Solver with the job's Journal, its Model wrapped with the Limits
	// and a Progress hook that calls the Solver's own; the Solver itself
	// is not changed.
	Task   maker.Task
	Solver *maker.Solver
	// Finish, if set, is called after the run with the result filled in
	// from the report and the error. It may set State, and turn a solved
	// result into a failed one (a task that ended in a wrong state) with
	// an Error.
	Finish func(r *Result)
	// Close, if set, releases what the unit holds; it is called once the
	// job ends.
	Close func() error
	// Run, set instead of Task and Solver, runs a job that is not a step
	// loop (a voted decomposition: see OwnRun).
	Run func(ctx context.Context, o OwnRun, r *Result) error
}

// Builder makes a job ready to run. An error makes the job's result
// invalid, with the error's message after the job's line. It is called
// from several goroutines at once, one job each.
type Builder func(ctx context.Context, job Job) (*Unit, error)

// Progress is a batch's progress, over the jobs of the file.
type Progress struct {
	// Tasks is the number of jobs; Done those with a result, Running
	// those being solved.
	Tasks, Done, Running int
	// Solved, Failed and Invalid count the results.
	Solved, Failed, Invalid int
	// Steps and Samples are the totals so far, over finished and running
	// tasks (replayed steps of a resumed task included).
	Steps, Samples int
	// Cost is the cost so far, at each model's price.
	Cost float64
}

// Runner solves a batch of jobs, Concurrency at a time: for each it calls
// Build, opens the job's journal, wraps its model with the shared Limits,
// solves it and records its result, before the next result. Jobs that
// have a result already (Done) are skipped; a job with Err set is
// recorded invalid without running.
//
// Set Store, or the three functions Results, Done and Journal, to keep
// results and journals; with neither, results are only returned in the
// Summary.
type Runner struct {
	// Build makes each job ready to run. Required.
	Build Builder
	// Concurrency is the most jobs solved at once; 0 means 1.
	Concurrency int `flag:"concurrency" usage:"tasks solved at once"`
	// Limits, if set, wrap every job's model and escalation model (see Limits.Wrap), so that
	// every call of every job shares them.
	Limits *Limits
	// Store keeps results and journals; it supplies Results, Done and
	// Journal where those are nil.
	Store *Store
	// Results records a finished job's result. An error stops the batch
	// (ErrWrite).
	Results interface{ Write(Result) error }
	// Done returns the result a job has from an earlier run, if any.
	Done func(Job) (Result, bool)
	// Journal returns the journal of a job: an opened one is resumed.
	// Nil, or a nil journal, means none.
	Journal func(Job) (*journal.Journal, error)
	// DecisionStore, if set, returns where a decomposition job ("multiply",
	// "sort", "problem") keeps its decision journal's lines (the engine's,
	// over NATS), in place of a journal file in the Store's state folder;
	// the job's run closes it. UnsignedDecisions opts those journals out
	// of signing, as Store.UnsignedJournals does files.
	DecisionStore     func(Job) (journal.Store, error)
	UnsignedDecisions bool
	// Progress, if set, is called after every step of every job and after
	// every result, one call at a time; it must be quick.
	Progress func(Progress)
	// Logger receives warnings (a torn journal line dropped, a journal
	// that did not close cleanly). Nil means none.
	Logger *slog.Logger
	// Budget, if set, is every job's maker.Solver.Budget (replacing the
	// one the Builder set): one spending cap for the whole batch, across
	// runs. Run first credits it with what earlier runs of the batch
	// spent: the Store's spend file (Store.Spend), and at least the cost
	// of the results recorded so far; a resumed job credits its
	// journaled steps itself, so that part of the spend file is not
	// credited twice. With a Store, Run keeps the spend file up to date
	// after every result and when it returns. So, stopped at the cap
	// (maker.ErrBudget, a fault: no result), the same batch run again
	// with the same cap spends nothing more than the cap allows in all,
	// as far as the spend file was written (a run killed at once loses
	// from it the spend since its last result, beyond its journaled
	// steps). The Summary's Spent and SpentTotal come from it. Use a
	// budget of its own for each Run.
	Budget *budget.Budget
	// Fault, if set, reports more errors as faults outside the task (see
	// IsFault and ErrFault): the errors of a work queue's engine, say.
	Fault func(error) bool
}

// Run solves jobs and returns the summary of the whole file: the results
// recorded by earlier runs count, and are not run again.
//
// Every goroutine it starts has ended when it returns. A panic in a job
// fails that job (ErrJobPanic); the others run on. A result is recorded
// as soon as its job ends, and a recorded result is never lost or
// rewritten: when ctx ends, the running jobs stop (their journals keep
// their steps) and get no result, so a later Run resumes them.
//
// A task stopped by a fault outside it (IsFault: a full disk, an I/O
// error, a provider or engine outage) gets no result either, and stops the
// batch with ErrFault naming the task and the cause: running the same
// batch again once the fault is fixed finishes it with the result of an
// uninterrupted run. "failed" is only for a task that ran and did not
// solve.
//
// Errors: ErrConfig (Validate's); ErrWrite when a result could not be recorded (the
// batch stops); ErrFault; ctx.Err() when ctx ended before every job had a
// result.
// The Summary is filled in every case.
func (r *Runner) Run(ctx context.Context, jobs []Job) (Summary, error) {
	start := time.Now()
	sum := Summary{Tasks: len(jobs)}
	if err := r.Validate(); err != nil {
		return sum, err
	}
	results, done, _ := r.backends()
	tr := &tracker{fn: r.Progress, running: map[int]running{}}
	tr.p.Tasks = len(jobs)

	out := make([]*Result, len(jobs))
	var pending []int
	var fatal error
	recorded := 0.0
	for i, job := range jobs {
		if rec, ok := done(job); ok {
			rec.Resumed = 0
			out[i] = &rec
			sum.Skipped++
			recorded += rec.Cost
			tr.finished(i, rec)
			continue
		}
		if job.Err != nil {
			res := Result{ID: job.ID, Line: job.Line, Kind: job.Kind(), Status: StatusInvalid, Error: job.Err.Error()}
			if err := results(res); err != nil {
				fatal = err
				break
			}
			out[i] = &res
			tr.finished(i, res)
			continue
		}
		pending = append(pending, i)
	}

	var book *spendBook
	if r.Budget != nil {
		book = r.openBook(jobs, pending, recorded)
	}
	if fatal == nil {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(max(r.Concurrency, 1))
		for _, i := range pending {
			if gctx.Err() != nil {
				break
			}
			g.Go(func() error {
				var res Result
				var finished bool
				var err error
				if p := panics.Try(func() { res, finished, err = r.runJob(gctx, i, jobs[i], tr, book) }); p != nil {
					res = Result{ID: jobs[i].ID, Line: jobs[i].Line, Kind: jobs[i].Kind(), Status: StatusFailed,
						Error: fmt.Errorf("%w: %w", ErrJobPanic, p.AsError()).Error()}
					finished, err = true, results(res)
				}
				if err != nil {
					return err
				}
				if finished {
					out[i] = &res
					tr.finished(i, res)
					if book != nil {
						book.finished(jobs[i].Key())
						return book.writeErr()
					}
				}
				return nil
			})
		}
		fatal = g.Wait()
	}

	for _, res := range out {
		if res == nil {
			sum.Unfinished++
			continue
		}
		sum.add(*res)
	}
	if r.Limits != nil {
		st := r.Limits.Stats()
		sum.Limits = &st
	}
	if book != nil {
		if err := book.writeErr(); err != nil && fatal == nil {
			fatal = err
		}
		sum.Spent, sum.SpentTotal = book.spent()
	}
	sum.WallSeconds = time.Since(start).Seconds()
	switch {
	case fatal != nil:
		return sum, fatal
	case sum.Unfinished > 0 && ctx.Err() != nil:
		return sum, ctx.Err()
	}
	return sum, nil
}

// backends returns the results, done and journal functions, from the
// Store where the fields are nil.
func (r *Runner) backends() (results func(Result) error, done func(Job) (Result, bool), openJournal func(Job) (*journal.Journal, error)) {
	results = func(Result) error { return nil }
	done = func(Job) (Result, bool) { return Result{}, false }
	if r.Store != nil {
		results, done, openJournal = r.Store.Write, r.Store.Done, r.Store.Journal
	}
	if r.Results != nil {
		results = r.Results.Write
	}
	if r.Done != nil {
		done = r.Done
	}
	if r.Journal != nil {
		openJournal = r.Journal
	}
	write := results
	results = func(res Result) error {
		if err := write(res); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrWrite, res.Key(), err)
		}
		return nil
	}
	return results, done, openJournal
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// runJob runs one job and records its result. finished is false for a job
// stopped by ctx (no result); err is a result that could not be recorded,
// or ErrFault for a job stopped by a fault outside it (no result).
func (r *Runner) runJob(ctx context.Context, i int, job Job, tr *tracker, book *spendBook) (res Result, finished bool, err error) {
	if ctx.Err() != nil {
		return res, false, nil
	}
	results, _, openJournal := r.backends()
	start := time.Now()
	res = Result{ID: job.ID, Line: job.Line, Kind: job.Kind()}
	record := func() (Result, bool, error) {
		res.WallSeconds = time.Since(start).Seconds()
		return res, true, results(res)
	}

	var unit *Unit
	var berr error
	if p := panics.Try(func() { unit, berr = r.Build(ctx, job) }); p != nil {
		res.Status, res.Error = StatusFailed, fmt.Errorf("%s: %w: building it: %w", job.Where(), ErrJobPanic, p.AsError()).Error()
		return record()
	}
	if berr == nil && (unit == nil || (unit.Run == nil && (unit.Task == nil || unit.Solver == nil))) {
		berr = errors.New("the builder returned no task or no solver")
	}
	if berr != nil {
		if ctx.Err() != nil && errors.Is(berr, ctx.Err()) {
			return res, false, nil
		}
		res.Status, res.Error = StatusInvalid, job.Where()+": "+berr.Error()
		return record()
	}
	if unit.Close != nil {
		defer func() {
			if p := panics.Try(func() {
				if cerr := unit.Close(); cerr != nil {
					r.logger().Warn("closing a job failed", "job", job.Key(), "err", cerr)
				}
			}); p != nil {
				r.logger().Warn("closing a job panicked", "job", job.Key(), "panic", p.AsError())
			}
		}()
	}

	if unit.Run != nil {
		return r.runOwn(ctx, job, unit, &res, record)
	}
	// The job runs a copy of the Solver it was built with, which gets
	// the job's journal, the limited model and the progress hook: the
	// Builder's Solver is not changed after it was made.
	run := *unit.Solver
	s := &run
	if r.Limits != nil {
		s.Model = r.Limits.Wrap(s.Model)
		if e := s.Escalation; e != nil && e.Model != nil { // its calls share the limits too
			c := *e
			c.Model, s.Escalation = r.Limits.Wrap(e.Model), &c
		}
	}
	if r.Budget != nil {
		s.Budget = r.Budget
	}
	if c, err := s.Vote.WithDefaults(); err == nil {
		res.K = c.K
	}
	res.Model = maker.ModelIdentity(s.Model)
	if openJournal != nil {
		j, jerr := openJournal(job)
		if r.fault(jerr) {
			return res, false, faultErr(job, jerr)
		}
		if stopped(ctx, jerr) {
			return res, false, nil
		}
		if jerr != nil {
			res.Status, res.Error = StatusFailed, jerr.Error()
			if errors.Is(jerr, journal.ErrCorrupt) || errors.Is(jerr, journal.ErrVersion) || errors.Is(jerr, journal.ErrPath) {
				res.Status = StatusInvalid
			}
			return record()
		}
		if j != nil {
			s.Journal = j
			res.Journal = r.rel(j.Path())
			if n := j.TornBytes(); n > 0 {
				r.logger().Warn("a torn last journal line was dropped; that step is decided again", "job", job.Key(), "journal", j.Path(), "bytes", n)
			}
			defer func() {
				if cerr := j.Close(); cerr != nil {
					r.logger().Warn("closing a journal failed", "journal", j.Path(), "err", cerr)
				}
			}()
		}
	}
	price := priceOf(s)
	prev := s.Progress
	s.Progress = func(e maker.Event) {
		tr.step(i, e.Report, price)
		if book != nil && s.Journal != nil {
			book.stepped(job.Key(), price(e.Report)) // journaled before the event
		}
		if prev != nil {
			prev(e)
		}
	}
	defer tr.stopped(i)

	var rep maker.Report
	var serr error
	if p := panics.Try(func() { rep, serr = s.Solve(ctx, unit.Task) }); p != nil {
		serr = fmt.Errorf("%w: %w", ErrJobPanic, p.AsError())
	}
	if s.Journal != nil {
		// Durable before the result says the task is finished.
		if cerr := s.Journal.Close(); cerr != nil {
			r.logger().Warn("closing a journal failed", "journal", s.Journal.Path(), "err", cerr)
		}
	}
	if stopped(ctx, serr) {
		return res, false, nil
	}
	if r.fault(serr) {
		return res, false, faultErr(job, serr)
	}
	res.Steps, res.Samples, res.Valid, res.Flagged, res.Errors = rep.Steps, rep.Launched, rep.Valid, rep.Flagged, rep.Errors
	if len(rep.Flags) > 0 {
		res.Flags = maps.Clone(rep.Flags)
	}
	res.InputTokens, res.OutputTokens, res.Cost = rep.Usage.InputTokens, rep.Usage.OutputTokens, rep.Cost
	res.CachedInputTokens, res.CacheWriteTokens, res.Requests = rep.Usage.CachedInputTokens, rep.Usage.CacheWriteTokens, rep.Usage.Requests
	res.ToolCalls, res.Denied, res.Resumed = rep.ToolCalls, rep.Denied, rep.Resumed
	switch {
	case serr != nil:
		res.Status, res.Error = StatusFailed, serr.Error()
		if errors.Is(serr, journal.ErrMismatch) || errors.Is(serr, journal.ErrCorrupt) || errors.Is(serr, journal.ErrVersion) {
			res.Status = StatusInvalid
			res.Error = fmt.Sprintf("%s: %s; the task's line changed since its journal was written: restore the line, or remove %s to start the task over", job.Where(), serr, res.Journal)
		}
	case !rep.Done:
		res.Status, res.Error = StatusFailed, "the run ended before the task was done"
	default:
		res.Status = StatusSolved
	}
	if unit.Finish != nil {
		if p := panics.Try(func() { unit.Finish(&res) }); p != nil {
			res.Status, res.Error = StatusFailed, fmt.Errorf("%w: Finish: %w", ErrJobPanic, p.AsError()).Error()
		}
	}
	return record()
}

// stopped reports whether err is the run's stop (ctx ended) rather than
// the job's own failure: such a job gets no result, and the next run
// takes it up.
func stopped(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// rel names a journal relative to the results file's folder, with a
// Store.
func (r *Runner) rel(path string) string {
	if r.Store != nil {
		return r.Store.Rel(path)
	}
	return path
}

// priceOf returns a function that prices a report in progress: each
// member's usage at its own price (maker.Priced) or the solver's.
func priceOf(s *maker.Solver) func(rep *maker.Report) float64 {
	ms := []llms.Model{s.Model}
	if e, ok := s.Model.(*maker.Ensemble); ok {
		ms = e.Members()
	}
	prices := make([]maker.Price, len(ms))
	for i, m := range ms {
		prices[i] = s.Price
		if p, ok := m.(maker.Priced); ok {
			prices[i] = p.Price()
		}
	}
	return func(rep *maker.Report) float64 {
		c := 0.0
		for i, m := range rep.Models {
			if i < len(prices) {
				c += prices[i].Cost(m.Usage)
			}
		}
		return c
	}
}

// running is a running job's figures so far.
type running struct {
	steps, samples int
	cost           float64
}

// tracker adds up the progress of the running and finished jobs.
type tracker struct {
	mu      sync.Mutex
	fn      func(Progress)
	p       Progress // finished jobs only, but Running
	running map[int]running
}

func (t *tracker) report() {
	if t.fn == nil {
		return
	}
	p := t.p
	p.Running = len(t.running)
	for _, r := range t.running {
		p.Steps += r.steps
		p.Samples += r.samples
		p.Cost += r.cost
	}
	t.fn(p)
}

func (t *tracker) step(i int, rep *maker.Report, price func(*maker.Report) float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running[i] = running{steps: rep.Steps, samples: rep.Launched, cost: price(rep)}
	t.report()
}

func (t *tracker) stopped(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.running, i)
}

func (t *tracker) finished(i int, res Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.running, i)
	t.p.Done++
	switch res.Status {
	case StatusSolved:
		t.p.Solved++
	case StatusFailed:
		t.p.Failed++
	default:
		t.p.Invalid++
	}
	t.p.Steps += res.Steps
	t.p.Samples += res.Samples
	t.p.Cost += res.Cost
	t.report()
}
