package maker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/internal/mono"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// Solver errors, for errors.Is. A failed race's error also wraps the vote
// package's sentinels (vote.ErrUndecided, vote.ErrTooManyErrors).
var (
	// ErrNoModel: the Solver has no Model.
	ErrNoModel = errors.New("solver has no model")
	// ErrStepLimit: the task was not done after MaxSteps steps.
	ErrStepLimit = errors.New("step limit reached")
	// ErrStep wraps every error of a step: a failed race, a failed Apply.
	ErrStep = errors.New("step failed")
	// ErrTaskPanic: a Task method panicked. The step fails at once (a
	// panic is a bug, not a flaky provider to retry).
	ErrTaskPanic = errors.New("task panicked")
)

// Solver drives a Task to its end: for each step it asks stateless
// microagents for samples, votes on them first-to-ahead-by-k, sends the
// winner's tool intent (if any) to the Executor, applies the winner and its
// observation to the task, and journals the step (buffered; see Journal's
// Durability).
//
// A Solver is its settings (the embedded Config, so that a setting reads
// as the Solver's own: s.Vote, s.MaxTokens) plus what runs them: the
// Model, the tools' Executor, the Journal, a shared Budget, and the
// watchers. Only Model is required: maker.Solver{Model: m} solves with
// k = 3. Build a Solver whole and do not change it while it solves. A
// Solver without a Journal may be reused for several Solve calls; a
// Journal serves one Solve (open the file again to resume).
type Solver struct {
	// Config is what the run is set to; see Config for each field and its
	// default.
	Config
	// Model answers every sample.
	Model llms.Model
	// Executor runs winning tool intents. Nil means no tools: an intent
	// gets a denial observation that says so, which the next prompt shows.
	Executor *executor.Executor
	// Tools are declared to the model with each call (usually
	// executor.Declare's), as Config.ToolDeclaration says, and recorded in
	// the journal's settings. Declaring is not permitting: the Executor
	// decides.
	Tools []llms.Tool
	// Journal records every decided step; nil means no journal. A journal
	// opened with journalfile.Open is replayed first, then the run continues.
	Journal *journal.Journal
	// Budget, if set, caps the money the run spends, as Spender says
	// (maker/budget's Budget is mdap's; its *Error names the cap and what
	// was spent). Share one Budget among solvers to cap them together.
	Budget Spender
	// Progress, if set, is called after every step (replayed ones
	// included), from the goroutine that called Solve; it must be quick.
	Progress func(Event)
	// OnSample, if set, is called as each sample completes, from the
	// goroutine that drew it: concurrently, so it must be safe for
	// concurrent use, and quick (it holds back that sample's vote). It
	// shows a step's activity while the step is being decided.
	OnSample func(SampleEvent)
	// Logger receives debug logs of red flags and tool calls. Nil means
	// none: a library does not write into its host's log unasked.
	Logger *slog.Logger
	// Observer, if set, watches the run, its steps, model calls and tool
	// calls (traces and metrics: see maker/observe). Nil costs nothing.
	Observer Observer
	// MinVoters, if set, is asked at each step's start, from the goroutine
	// that called Solve, how many distinct voters that step's winning
	// votes need (vote.Config.MinVoters; an answer is cut to 1 through
	// vote.MaxVoters): an engine whose workers come and go follows them,
	// so a step is not held for a worker that left nor left to one
	// worker's word once another serves. It replaces Vote.MinVoters; nil
	// keeps it. A replayed step does not ask.
	MinVoters func(ctx context.Context) int
}

// SampleEvent is one sample as it completes, before the race tallies it.
type SampleEvent struct {
	// Step and Index identify the sample.
	Step, Index int
	// Model is the identity of the model that drew it.
	Model string
	// Err is the provider's error, if the call failed.
	Err error
	// Flag is the red flag (ErrEmpty, ErrCutOff, ErrUnparseable, ...), if
	// the reply may not vote; Reason is the detailed reason (the word the
	// Verdict of Inspect and the MCP tools use too).
	Flag, Reason error
	// Text is the reply's text, for a look at a flagged reply. Do not keep
	// it.
	Text string
	// Usage is what the sample cost.
	Usage vote.Usage
	// Key is the sample's vote key when it votes (no Err, no Flag), else
	// 0; Worker is who drew it (Reply.Worker: the engine's worker
	// identity, "" in process). With the step's winning key (Event's
	// Record.Key) they say which workers' answers lost.
	Key    uint64
	Worker string
}

// Event is a progress report: one step was decided (or replayed).
type Event struct {
	// Step is the step's number, from 0.
	Step int
	// Replayed is true for steps read back from the journal.
	Replayed bool
	// Record is the step as journaled. Do not keep or change it.
	Record *journal.StepRecord
	// Report is the run so far. Do not keep or change its maps.
	Report *Report
}

func (s *Solver) maxTokens() int { return cmp.Or(max(s.MaxTokens, 0), DefaultMaxTokens) }

func (s *Solver) temperature() func(int) float64 {
	if s.Temperature != nil {
		return s.Temperature
	}
	return DefaultTemperature
}

var discard = slog.New(slog.DiscardHandler)

func (s *Solver) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return discard
}

// Solve runs task to its end and returns what the run did.
//
// With a Journal, Solve first checks the journal's header against the
// task's fingerprint and the Settings (journal.ErrMismatch), replays its
// steps through Task.Apply (from the last checkpoint, for a Snapshotter),
// and only then writes: it cuts a torn last line and continues from the
// next step. A journal that does not fit, or whose steps do not replay, is
// left as it was. The Report then covers the whole run, replayed steps
// included, so a resumed run reports the same totals as an uninterrupted
// one.
//
// Errors: ErrNoModel; Config.Validate's *FieldError (wrapping ErrConfig)
// for a refused setting; the journal's errors
// (journal.ErrMismatch, journal.ErrCorrupt, ErrPendingSideEffect, and a
// write that failed); a step that fails wraps ErrStep and says which
// step, and wraps the race's error (vote.ErrUndecided with its tally,
// vote.ErrTooManyErrors), ErrTaskPanic, a model's error wrapping
// ErrPermanent (the first one met: the step stops at once), or the
// task's; ErrNoAnswerSchema for Structured without a schema; ErrStepLimit;
// ctx.Err() when ctx ends. On an error the Report covers the steps decided
// so far, which Solve writes to the journal before it returns (unless the
// journal's write is what failed: a resume decides the unwritten ones
// again).
func (s *Solver) Solve(ctx context.Context, task Task) (rep Report, err error) {
	start := time.Now()
	if s.Model == nil {
		return rep, ErrNoModel
	}
	ms := members(s.Model)
	endRun := noRunEnd
	defer func() { rep.Wall = time.Since(start); s.cost(&rep, ms); endRun(&rep, err) }()
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = ModelIdentity(m)
	}
	initModels := func() {
		if len(rep.Models) != len(ms) {
			rep.Models = make([]ModelReport, len(ms))
		}
		for i, id := range ids {
			rep.Models[i].Model = id
		}
	}
	initModels()
	if err := s.Config.Validate(); err != nil {
		return rep, err
	}
	cfg, err := s.Vote.WithDefaults()
	if err != nil {
		return rep, err
	}
	if cfg.Workers == nil {
		// One set of draw goroutines for the run's races: a step's
		// samples do not each start a goroutine and grow its stack.
		w := new(vote.Workers)
		defer w.Close()
		cfg.Workers = w
	}
	ctx, endRun = s.observeRun(ctx, ids, cfg.K)
	settings, err := s.settings(cfg.K)
	if err != nil {
		return rep, err
	}
	schema, err := s.answerSchema(task)
	if err != nil {
		return rep, err
	}
	if schema != nil {
		settings.setExtra("answer_schema", schemaDigest(schema))
	}
	agent, err := s.newAgent(schema)
	if err != nil {
		return rep, err
	}
	run := &run{Solver: s, task: task, cfg: cfg, rep: &rep, ids: ids, agent: agent}
	if e := s.Escalation; e != nil && e.Policy == EscalateModel {
		m, err := e.ModelFor(s.Model)
		if err != nil {
			return rep, err
		}
		run.escAgent = agent.withModel(s, m)
		for _, m := range members(m) {
			run.escIDs = append(run.escIDs, ModelIdentity(m))
		}
	}
	// Each sample is kept for the step's record when someone reads it: a
	// journal that records samples, or a Progress callback (a view).
	run.tally.keep = s.Progress != nil || s.Journal != nil && s.Journal.RecordsSamples()
	if s.ToolFirst {
		run.tally.group = run.toolGroup
	}
	if j := s.Journal; j != nil {
		defer func() {
			if cerr := j.Flush(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		jr := journal.Run{Fingerprint: task.Fingerprint(), TaskVersion: taskVersion(task), Members: ids, Diff: settings.DiffJSON}
		if jr.Settings, err = json.Marshal(settings); err != nil {
			return rep, err
		}
		if err := j.Check(jr); err != nil {
			return rep, err
		}
		pending, err := run.replay()
		initModels() // a checkpoint's report replaced them
		if err != nil {
			return rep, err
		}
		if s.Budget != nil {
			s.Budget.Credit(s.spentIn(&rep, ms))
		}
		if err := j.Begin(jr); err != nil {
			return rep, err
		}
		if pending != nil {
			if err := run.finish(ctx, pending); err != nil {
				return rep, err
			}
		}
		if rep.Done {
			return rep, nil
		}
	}
	return rep, run.loop(ctx)
}

// run is one Solve call's state.
type run struct {
	*Solver
	task  Task
	cfg   vote.Config
	kplan KPlanner // the k policy's plan, nil for a fixed k or before its first use
	agent *microagent
	// escAgent draws an escalated race's samples (EscalateModel; else
	// nil): the Escalation's Model without the run's own models.
	escAgent *microagent
	escIDs   []string // the identities of escAgent's members
	rep      *Report
	next     int                 // the next step to decide
	last     *intent.Observation // the last step's observation
	ids      []string            // the identities of the models that draw samples
	// The step's tally of samples by member, reused step after step.
	tally modelTally
}

func (r *run) loop(ctx context.Context) error {
	for ; ; r.next++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.MaxSteps > 0 && r.next >= r.MaxSteps {
			return fmt.Errorf("%w: %s and the task is not done", ErrStepLimit, words.Plural(r.next, "step"))
		}
		started := mono.Now()
		stepCtx, endStep := r.observeStep(ctx)
		rec, err := r.decide(stepCtx)
		if err != nil {
			if rec != nil {
				r.rep.addSamples(rec, false)
			}
			endStep(rec, r.rep, err)
			return err
		}
		err = r.act(stepCtx, rec, started)
		endStep(rec, r.rep, err)
		if err != nil {
			return err
		}
		if r.rep.Done {
			return nil
		}
	}
}

// decide votes on step r.next. On a failed race the record still carries
// the samples spent, for the report.
func (r *run) decide(ctx context.Context) (*journal.StepRecord, error) {
	step := r.next
	var msgs []llms.MessageContent
	if rec := catch.Try(func() { msgs = r.task.Prompt(r.last) }); rec != nil {
		return nil, fmt.Errorf("%w: step %d: %w: Prompt: %w", ErrStep, step, ErrTaskPanic, rec.AsError())
	}
	log := r.logger()
	// A panic in Decode or a permanent provider error (ErrPermanent)
	// cancels the race with its cause, so the step fails at once instead
	// of spending the error budget on retries.
	raceCtx, cancelRace := context.WithCancelCause(ctx)
	defer cancelRace(nil)
	tally := &r.tally // the run's, emptied for each step
	tally.reset(len(r.ids))
	drawWith := func(agent *microagent) vote.Drawer[intent.Output] {
		wave := agent.wave(step, msgs)
		return func(ctx context.Context, i int) vote.Sample[intent.Output] {
			return r.draw(ctx, wave, step, i, tally, log, cancelRace)
		}
	}
	cfg, err := r.stepConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: step %d: %w", ErrStep, step, err)
	}
	res, esc, err := r.escalatedRace(raceCtx, cfg, drawWith)
	res, esc, err = r.reconsider(raceCtx, cfg, drawWith, res, esc, err)
	rec := &journal.StepRecord{
		Step:      step,
		K:         cfg.K,
		Winner:    res.Winner,
		Key:       strconv.FormatUint(res.Key, 16),
		Votes:     make(map[string]int, len(res.Votes)),
		Counts:    res.Counts,
		Flags:     res.Flags,
		Usage:     res.Usage,
		Contested: esc.contested,
		Escalated: esc.escalated,
	}
	return r.record(ctx, raceCtx, rec, res, err, tally)
}

// record completes a step's record from its race.
func (r *run) record(ctx, raceCtx context.Context, rec *journal.StepRecord, res vote.Result[intent.Output], err error, tally *modelTally) (*journal.StepRecord, error) {
	for k, v := range res.Votes {
		if k == res.Key {
			rec.Votes[rec.Key] = v // the winner's key, written once
			continue
		}
		rec.Votes[strconv.FormatUint(k, 16)] = v
	}
	if len(r.ids) > 1 {
		rec.Models = tally.shares(res.Valid+res.Flagged+res.Errors, res.Key)
	}
	if tally.keep {
		rec.Samples, rec.MoreSamples = tally.samples(res.Key)
	}
	if r.AdaptiveK != nil && err == nil {
		r.checkStep(rec)
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return rec, ctxErr
		}
		if cause := context.Cause(raceCtx); errors.Is(cause, ErrTaskPanic) || errors.Is(cause, ErrPermanent) {
			err = cause
		}
		return rec, fmt.Errorf("%w: step %d: %w", ErrStep, rec.Step, err)
	}
	return rec, nil
}

// act runs a decided step's tool intent, applies the winner, journals the
// step and reports it. A side-effect call that will run is journaled as
// pending, durably, before it runs.
func (r *run) act(ctx context.Context, rec *journal.StepRecord, started time.Duration) error {
	if err := r.verify(ctx, rec); err != nil {
		r.rep.addSamples(rec, false) // spent, though the step failed
		return err
	}
	if r.Journal != nil && r.isWrite(rec.Winner) {
		if err := r.Journal.Pending(*rec); err != nil {
			return fmt.Errorf("%w: step %d: the pending side-effect call could not be journaled, so it did not run: %w", ErrStep, rec.Step, err)
		}
	}
	return r.complete(ctx, rec, started)
}

// complete runs the winner's tool intent, if any, applies the winner,
// journals the complete record and reports it. started is the step's
// start, a reading of mono.Now.
func (r *run) complete(ctx context.Context, rec *journal.StepRecord, started time.Duration) error {
	var obs *intent.Observation
	if ti := rec.Winner.Intent; ti != nil {
		o, err := r.execute(ctx, rec.Step, ti)
		if err != nil {
			r.rep.addSamples(rec, false) // spent, though the step failed
			return fmt.Errorf("%w: step %d: tool %s: %w", ErrStep, rec.Step, ti.Tool, err)
		}
		obs = &o
		rec.Observation = obs
		rec.ObservationDigest = digest(obs)
	}
	done, err := r.apply(rec.Winner, obs)
	if err != nil {
		r.rep.addSamples(rec, false) // spent, though the step failed
		return fmt.Errorf("%w: step %d: apply: %w", ErrStep, rec.Step, err)
	}
	rec.Elapsed = mono.Since(started)
	if r.Journal != nil {
		if err := r.Journal.Step(rec); err != nil {
			r.rep.addSamples(rec, false) // spent, but not a step of the record
			return fmt.Errorf("%w: step %d was decided but could not be journaled (%w); once its cause is fixed (room on the disk, the engine back), resume: that step, and those before it not yet written, are decided again", ErrStep, rec.Step, err)
		}
	}
	r.rep.addStep(rec)
	if err := r.observe(rec); err != nil {
		return err
	}
	r.rep.Done = done
	r.last = obs
	if r.Progress != nil {
		r.Progress(Event{Step: rec.Step, Record: rec, Report: r.rep})
	}
	if r.Journal != nil && !done && r.Journal.CheckpointDue() {
		if err := r.checkpoint(rec.Step + 1); err != nil {
			return err
		}
	}
	return nil
}

// apply applies a winner to the task, turning a panic into ErrTaskPanic.
func (r *run) apply(w intent.Output, obs *intent.Observation) (done bool, err error) {
	if p := catch.Try(func() { done, err = r.task.Apply(w, obs) }); p != nil {
		err = fmt.Errorf("%w: Apply: %w", ErrTaskPanic, p.AsError())
	}
	return done, err
}
