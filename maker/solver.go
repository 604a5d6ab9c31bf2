package maker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
	"github.com/sourcegraph/conc/panics"
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
// observation to the task, and journals the step before the next starts.
//
// Only Model is required; every other field has a working zero value. A
// Solver without a Journal may be reused for several Solve calls; a Journal
// serves one Solve (open the file again to resume).
type Solver struct {
	// Model answers every sample.
	Model llms.Model
	// Executor runs winning tool intents. Nil means no tools: an intent
	// gets a denial observation that says so, which the next prompt shows.
	Executor *executor.Executor
	// Tools are declared to the model with each call (see
	// executor.Declare). Declaring is not permitting: the Executor decides.
	Tools []llms.Tool
	// Vote configures each step's race; its zero value is k = 3.
	Vote vote.Config
	// MaxTokens caps a reply; a longer one is red-flagged. Default 750.
	MaxTokens int
	// Temperature gives sample i's temperature. Nil means
	// DefaultTemperature: 0 for the first sample of a step, 0.1 after.
	Temperature func(sample int) float64
	// Flags chooses the red flags; the zero value applies them all.
	Flags FlagRules
	// CallOptions are added to every model call.
	CallOptions []llms.CallOption
	// Journal records every decided step; nil means no journal. A journal
	// opened with OpenJournal is replayed first, then the run continues.
	Journal *Journal
	// Settings describes what else determines the run's answers (model,
	// seed, simulated error rates...) as space-separated name=value
	// fields. It goes into the journal header with K, MaxTokens and the
	// red flags, and resuming with other settings is refused. Parallel and
	// the budgets are not part of it: they do not change a decided step,
	// so a run that spent its budget can resume with a larger one.
	Settings string
	// RerunPending allows a resumed run whose journal ends with a pending
	// side-effect call to run that call again. Off, such a resume fails
	// with ErrPendingSideEffect.
	RerunPending bool
	// MaxSteps stops a run that is not done after that many steps, with
	// ErrStepLimit. Zero means no limit.
	MaxSteps int
	// Price turns usage into Report.Cost.
	Price Price
	// Progress, if set, is called after every step (replayed ones
	// included), from the goroutine that called Solve; it must be quick.
	Progress func(Event)
	// Logger receives debug logs of red flags and info logs of tool calls.
	// Nil means slog.Default().
	Logger *slog.Logger
}

// Event is a progress report: one step was decided (or replayed).
type Event struct {
	// Step is the step's number, from 0.
	Step int
	// Replayed is true for steps read back from the journal.
	Replayed bool
	// Record is the step as journaled. Do not keep or change it.
	Record *StepRecord
	// Report is the run so far. Do not keep or change its maps.
	Report *Report
}

// settingsLine is what the journal header holds beside the fingerprint.
func (s *Solver) settingsLine(cfg vote.Config) string {
	return fmt.Sprintf("k=%d max_tokens=%d allow_empty=%v allow_overlong=%v allow_cut_off=%v %s",
		cfg.K, s.maxTokens(), s.Flags.AllowEmpty, s.Flags.AllowOverlong, s.Flags.AllowCutOff, s.Settings)
}

func (s *Solver) maxTokens() int {
	if s.MaxTokens > 0 {
		return s.MaxTokens
	}
	return DefaultMaxTokens
}

func (s *Solver) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Solve runs task to its end and returns what the run did.
//
// With a Journal, Solve first checks the journal's header against the task's
// fingerprint and the settings (ErrJournalMismatch), replays its steps
// through Task.Apply, then continues from the next step. The Report then
// covers the whole run, replayed steps included, so a resumed run reports
// the same totals as an uninterrupted one.
//
// Errors: ErrNoModel; vote.ErrConfig for a bad Vote; journal errors; a step
// that fails wraps ErrStep and says which step, and wraps the race's error
// (vote.ErrUndecided with its tally, vote.ErrTooManyErrors) or the task's;
// ErrStepLimit; ctx.Err() when ctx ends. On an error the Report covers the
// steps decided so far, which are in the journal.
func (s *Solver) Solve(ctx context.Context, task Task) (rep Report, err error) {
	start := time.Now()
	defer func() { rep.Wall = time.Since(start); rep.Cost = s.Price.Cost(rep.Usage) }()
	if s.Model == nil {
		return rep, ErrNoModel
	}
	cfg, err := s.Vote.WithDefaults()
	if err != nil {
		return rep, err
	}
	temp := s.Temperature
	if temp == nil {
		temp = DefaultTemperature
	}
	agent := &microagent{model: s.Model, maxTokens: s.maxTokens(), temperature: temp, tools: s.Tools, options: s.CallOptions}

	var last *intent.Observation
	step := 0
	if j := s.Journal; j != nil {
		defer func() {
			if cerr := j.Flush(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		if err := j.begin(task.Fingerprint(), s.settingsLine(cfg)); err != nil {
			return rep, err
		}
		var done bool
		step, last, done, err = s.replay(task, &rep)
		if err != nil || done {
			rep.Done = done
			return rep, err
		}
	}

	for ; ; step++ {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if s.MaxSteps > 0 && step >= s.MaxSteps {
			return rep, fmt.Errorf("%w: %d steps and the task is not done", ErrStepLimit, step)
		}
		rec, obs, done, err := s.step(ctx, task, agent, cfg, step, last)
		if err != nil {
			if rec != nil {
				rep.addSamples(rec)
			}
			return rep, err
		}
		rep.addStep(rec)
		if s.Journal != nil {
			if err := s.Journal.step(rec); err != nil {
				return rep, err
			}
		}
		if s.Progress != nil {
			s.Progress(Event{Step: step, Record: rec, Report: &rep})
		}
		last = obs
		if done {
			rep.Done = true
			return rep, nil
		}
	}
}

// step decides one step, runs its tool intent and applies it. On a failed
// race the record still carries the samples spent, for the report.
func (s *Solver) step(ctx context.Context, task Task, agent *microagent, cfg vote.Config, step int, last *intent.Observation) (*StepRecord, *intent.Observation, bool, error) {
	var msgs []llms.MessageContent
	if rec := panics.Try(func() { msgs = task.Prompt(last) }); rec != nil {
		return nil, nil, false, fmt.Errorf("%w: step %d: %w: Prompt: %w", ErrStep, step, ErrTaskPanic, rec.AsError())
	}
	log := s.logger()
	// A panic in Decode cancels the race with its cause, so the step fails
	// at once instead of spending the error budget on retries.
	raceCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	draw := func(ctx context.Context, i int) vote.Sample[intent.Output] {
		reply, took, err := agent.sample(ctx, SampleID{Step: step, Index: i}, msgs)
		sm := vote.Sample[intent.Output]{Usage: vote.Usage{InputTokens: reply.InputTokens, OutputTokens: reply.OutputTokens, Latency: took}}
		if err != nil {
			sm.Err = err
			return sm
		}
		if flag := s.Flags.check(reply, agent.maxTokens); flag != nil {
			sm.Flag = flag
			return sm
		}
		var out intent.Output
		if rec := panics.Try(func() { out, err = task.Decode(reply) }); rec != nil {
			perr := fmt.Errorf("%w: Decode: %w", ErrTaskPanic, rec.AsError())
			cancel(perr)
			sm.Err = perr
			return sm
		}
		if err == nil {
			sm.Key, err = intent.Key(out)
		}
		if err != nil {
			sm.Flag = classify(err)
			if log.Enabled(ctx, slog.LevelDebug) {
				log.DebugContext(ctx, "red flag", "step", step, "sample", i, "flag", sm.Flag, "why", err)
			}
			return sm
		}
		sm.Value = out
		return sm
	}
	res, err := vote.Race(raceCtx, cfg, draw)
	rec := &StepRecord{
		Step:   step,
		Winner: res.Winner,
		Key:    strconv.FormatUint(res.Key, 16),
		Votes:  make(map[string]int, len(res.Votes)),
		Counts: Counts{Launched: res.Launched, Valid: res.Valid, Flagged: res.Flagged, Errors: res.Errors, Cancelled: res.Cancelled},
		Flags:  res.Flags,
		Usage:  usageOf(res.Usage),
	}
	for k, v := range res.Votes {
		rec.Votes[strconv.FormatUint(k, 16)] = v
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return rec, nil, false, ctxErr
		}
		if cause := context.Cause(raceCtx); errors.Is(cause, ErrTaskPanic) {
			return rec, nil, false, fmt.Errorf("%w: step %d: %w", ErrStep, step, cause)
		}
		return rec, nil, false, fmt.Errorf("%w: step %d: %w", ErrStep, step, err)
	}

	var obs *intent.Observation
	if ti := res.Winner.Intent; ti != nil {
		o, err := s.execute(ctx, step, ti)
		if err != nil {
			return rec, nil, false, fmt.Errorf("%w: step %d: tool %s: %w", ErrStep, step, ti.Tool, err)
		}
		obs = &o
		rec.Observation = obs
		rec.ObservationDigest = digest(obs)
	}
	var done bool
	if p := panics.Try(func() { done, err = task.Apply(res.Winner, obs) }); p != nil {
		err = fmt.Errorf("%w: Apply: %w", ErrTaskPanic, p.AsError())
	}
	if err != nil {
		return rec, nil, false, fmt.Errorf("%w: step %d: apply: %w", ErrStep, step, err)
	}
	return rec, obs, done, nil
}

// execute runs a winning tool intent. A side-effect call is journaled as
// pending, durably, before it runs.
func (s *Solver) execute(ctx context.Context, step int, ti *intent.ToolIntent) (intent.Observation, error) {
	if s.Executor == nil {
		return intent.Observation{Tool: ti.Tool, Status: intent.StatusDenied, Reason: intent.ReasonUnavailable,
			Content: "this run has no tools: answer without calling one"}, nil
	}
	// Only a call that will run can have an effect: a denied one (unknown
	// tool, policy, arguments) is not journaled as pending.
	if _, runs := s.Executor.Check(*ti); runs && s.Journal != nil && !s.Executor.ReadOnly(ti.Tool) {
		if err := s.Journal.pending(step, ti); err != nil {
			return intent.Observation{}, err
		}
	}
	obs, err := s.Executor.Execute(ctx, *ti)
	s.logger().InfoContext(ctx, "tool call", "step", step, "tool", ti.Tool, "status", obs.Status, "truncated", obs.Truncated)
	return obs, err
}

// digest hashes what the next prompt sees of an observation, so equal
// calls give equal digests across runs (the duration is left out).
func digest(obs *intent.Observation) string {
	sum := sha256.Sum256([]byte(obs.Text()))
	return hex.EncodeToString(sum[:])
}

// replay applies the journal's steps to a fresh task. It returns the next
// step number, the last observation, and whether the task is already done.
// A pending side-effect line counts only if it is the journal's last: a
// later step record means the call finished and was recorded.
func (s *Solver) replay(task Task, rep *Report) (next int, last *intent.Observation, done bool, err error) {
	j := s.Journal
	var pending *pendingRecord
	n := 1 // line number, after the header
	err = j.records(func(raw []byte) error {
		n++
		if done {
			return fmt.Errorf("%w: %s:%d follows the step that finished the task", ErrJournalCorrupt, j.path, n)
		}
		var pend pendingRecord
		if json.Unmarshal(raw, &pend) == nil && pend.Intent != nil {
			pending = &pend
			return nil
		}
		pending = nil
		rec, err := decodeRecord(raw)
		if err != nil {
			return fmt.Errorf("%w: %s:%d: %w", ErrJournalCorrupt, j.path, n, err)
		}
		if rec.Step != next {
			return fmt.Errorf("%w: %s:%d holds step %d where step %d was expected", ErrJournalCorrupt, j.path, n, rec.Step, next)
		}
		done, err = task.Apply(rec.Winner, rec.Observation)
		if err != nil {
			return fmt.Errorf("%w: replaying step %d: %w", ErrStep, rec.Step, err)
		}
		rep.addStep(rec)
		rep.Resumed++
		if s.Progress != nil {
			s.Progress(Event{Step: rec.Step, Replayed: true, Record: rec, Report: rep})
		}
		last, next = rec.Observation, next+1
		return nil
	})
	if err != nil {
		return 0, nil, false, err
	}
	if pending != nil && !s.RerunPending {
		return 0, nil, false, fmt.Errorf("%w: step %d called %s with %v; check its effect, then resume with RerunPending (--rerun-pending) to run it again",
			ErrPendingSideEffect, pending.Pending, pending.Intent.Tool, pending.Intent.Args)
	}
	return next, last, done, nil
}

// decodeRecord reads a journal line with numbers kept as json.Number, as
// intent.Parse gives them, so a replayed winner is the value that won.
func decodeRecord(raw []byte) (*StepRecord, error) {
	var rec StepRecord
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&rec); err != nil {
		return nil, err
	}
	return &rec, nil
}
