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
	"sync"
	"time"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/words"
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
	// executor.Declare), as ToolDeclaration says. Declaring is not
	// permitting: the Executor decides.
	Tools []llms.Tool
	// ToolDeclaration is how Tools reach the model: natively, in the
	// prompt, or both; the zero value chooses by the model (see
	// DeclareAuto). The choice is the same for every sample of a run,
	// and the journal's settings record it.
	ToolDeclaration ToolDeclaration
	// Vote configures each step's race; its zero value is k = 3.
	Vote vote.Config
	// AdaptiveK, if set, chooses each step's k from the run's own votes
	// instead of Vote.K (see AdaptiveK); nil keeps the fixed Vote.K.
	AdaptiveK *AdaptiveK
	// MaxTokens caps a reply; a longer one is red-flagged. Default
	// DefaultMaxTokens (750).
	MaxTokens int
	// Temperature gives sample i's temperature. Nil means
	// DefaultTemperature: 0 for the first sample of a step, 0.1 after.
	Temperature func(sample int) float64
	// Flags chooses the red flags; the zero value applies them all.
	Flags FlagRules
	// CallOptions are added to every model call, after the solver's own:
	// the temperature, the reply cap and the sample's seed (its index
	// plus one, llms.WithSeed, so a provider that honours seeds gives each
	// sample its own reproducible draw). A seed set here overrides the
	// per-sample one, and samples at one temperature may then all agree.
	CallOptions []llms.CallOption
	// Structured asks for structured output: the task, which must be a
	// StructuredTask (else Solve fails with ErrNoAnswerSchema), offers
	// its answer's JSON Schema, and every call carries it in its context
	// (AnswerSchemaFrom) with llms.WithJSONMode, so a model that supports
	// structured output (maker/models: OpenAI-compatible servers and
	// Ollama) constrains its replies to it. The journal records the
	// schema's digest.
	Structured bool
	// Timeout bounds each model call (langchaingo's clients have none of
	// their own); a call that takes longer is a failed draw wrapping
	// ErrCallTimeout. Zero means no bound but the context's.
	Timeout time.Duration
	// Journal records every decided step; nil means no journal. A journal
	// opened with OpenJournal is replayed first, then the run continues.
	Journal *Journal
	// Settings adds what else determines the run's answers and that the
	// solver cannot see (a prompt template's version, say) to the
	// journal's Settings, compared on resume. The model's identity, k, the
	// caps, flags, temperatures, declared tools and call options are
	// recorded without it (see Settings).
	Settings map[string]string
	// RerunPending allows a resumed run whose journal ends with a pending
	// side-effect call to finish that step: the journaled winner's call
	// runs again, exactly as decided, and the journaled winner is applied.
	// Off, such a resume fails with ErrPendingSideEffect.
	RerunPending bool
	// MaxSteps stops a run that is not done after that many steps, with
	// ErrStepLimit. Zero means no limit.
	MaxSteps int
	// SamplesPerCall asks for several samples of a wave in one request
	// (llms.WithN), each returned choice a sample with its own identity:
	// 0 or 1 means one sample per request (the paper's way), N > 1 at
	// most N choices a request, SamplesPerCallAuto as many as the wave
	// (see MaxSamplesPerCall). Samples of different temperatures never
	// share a request, so under DefaultTemperature the first sample of a
	// step is a request of its own. A provider that returns fewer choices
	// than asked is detected at its first such answer; the samples it
	// left out, and every later one, are separate calls. An Ensemble
	// always draws one sample per request. See docs/cost.md.
	SamplesPerCall int
	// Price turns usage into Report.Cost.
	Price Price
	// Budget, if set, caps the money the run spends (see Budget): a call
	// whose worst case would pass the cap is not started, and the step
	// fails with ErrBudget (a *BudgetError naming the cap and what was
	// spent). A resumed run credits the budget with its journaled steps'
	// cost. Share one Budget among solvers to cap them together.
	Budget *Budget
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

func (s *Solver) maxTokens() int {
	if s.MaxTokens > 0 {
		return s.MaxTokens
	}
	return DefaultMaxTokens
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
// task's fingerprint and the Settings (ErrJournalMismatch), replays its
// steps through Task.Apply (from the last checkpoint, for a Snapshotter),
// and only then writes: it cuts a torn last line and continues from the
// next step. A journal that does not fit, or whose steps do not replay, is
// left as it was. The Report then covers the whole run, replayed steps
// included, so a resumed run reports the same totals as an uninterrupted
// one.
//
// Errors: ErrNoModel; vote.ErrConfig for a bad Vote; ErrConfig for a
// bad AdaptiveK; the journal's errors
// (ErrJournalMismatch, ErrJournalCorrupt, ErrPendingSideEffect, and a
// write that failed); a step that fails wraps ErrStep and says which
// step, and wraps the race's error (vote.ErrUndecided with its tally,
// vote.ErrTooManyErrors), ErrTaskPanic, a model's error wrapping
// ErrPermanent (the first one met: the step stops at once), or the
// task's; ErrNoAnswerSchema for Structured without a schema; ErrStepLimit;
// ctx.Err() when ctx ends. On an error the Report covers the steps decided
// so far, which are in the journal.
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
	cfg, err := s.Vote.WithDefaults()
	if err != nil {
		return rep, err
	}
	auto, err := s.adaptive()
	if err != nil {
		return rep, err
	}
	ctx, endRun = s.observeRun(ctx, ids, cfg.K)
	settings, err := s.settings(cfg.K)
	if err != nil {
		return rep, err
	}
	native, toolText, _, err := s.declaration()
	if err != nil {
		return rep, err
	}
	schema, err := s.answerSchema(task)
	if err != nil {
		return rep, err
	}
	if schema != nil {
		if settings.Extra == nil {
			settings.Extra = map[string]string{}
		}
		settings.Extra["answer_schema"] = schemaDigest(schema)
	}
	temp := s.Temperature
	if temp == nil {
		temp = DefaultTemperature
	}
	run := &run{
		Solver: s, task: task, cfg: cfg, auto: auto, rep: &rep, ids: ids,
		agent: &microagent{model: s.Model, maxTokens: s.maxTokens(), temperature: temp, tools: native, toolText: toolText, options: s.CallOptions, timeout: s.Timeout, schema: schema, observer: s.Observer},
	}
	if s.Budget != nil {
		run.agent.budget = s.Budget
		run.agent.price = func(i int) Price { return s.priceOf(ms, i%len(ms)) }
	}
	if per := s.samplesPerCall(len(ms)); per > 1 {
		run.agent.perCall = &perCall{limit: per, onShort: func(got, asked int) {
			s.logger().Warn("the model returned fewer choices than asked: one sample per request from now on", "asked", asked, "got", got)
		}}
	}
	if s.Executor != nil {
		run.normalize = s.Executor.Normalize
	}
	if j := s.Journal; j != nil {
		defer func() {
			if cerr := j.Flush(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		if err := j.check(task.Fingerprint(), settings); err != nil {
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
		if err := j.begin(task.Fingerprint(), settings); err != nil {
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
	auto  *AdaptiveK // nil for a fixed k
	agent *microagent
	rep   *Report
	next  int                 // the next step to decide
	last  *intent.Observation // the last step's observation
	ids   []string            // the identities of the models that draw samples
	// normalize heals a tool intent against its schema before it is
	// keyed; nil without an executor.
	normalize func(intent.ToolIntent) (intent.ToolIntent, error)
}

func (r *run) loop(ctx context.Context) error {
	for ; ; r.next++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.MaxSteps > 0 && r.next >= r.MaxSteps {
			return fmt.Errorf("%w: %s and the task is not done", ErrStepLimit, words.Plural(r.next, "step"))
		}
		started := time.Now()
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
func (r *run) decide(ctx context.Context) (*StepRecord, error) {
	step := r.next
	var msgs []llms.MessageContent
	if rec := panics.Try(func() { msgs = r.task.Prompt(r.last) }); rec != nil {
		return nil, fmt.Errorf("%w: step %d: %w: Prompt: %w", ErrStep, step, ErrTaskPanic, rec.AsError())
	}
	log := r.logger()
	// A panic in Decode or a permanent provider error (ErrPermanent)
	// cancels the race with its cause, so the step fails at once instead
	// of spending the error budget on retries.
	raceCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tally := &modelTally{n: len(r.ids)}
	memo := &judgeMemo{}
	wave := r.agent.wave(step, msgs)
	draw := func(ctx context.Context, i int) (sm vote.Sample[intent.Output]) {
		reply, took, err := wave.sample(ctx, i)
		sm.Usage = reply.usage(took)
		var why error
		defer func() {
			tally.record(i, sm)
			if r.OnSample != nil {
				r.OnSample(SampleEvent{Step: step, Index: i, Model: r.ids[i%len(r.ids)], Err: sm.Err, Flag: sm.Flag, Reason: why, Text: reply.Text, Usage: sm.Usage})
			}
		}()
		if err != nil {
			sm.Err = err
			if errors.Is(err, ErrPermanent) {
				cancel(err) // no retry can fix it: fail the step now
			}
			return sm
		}
		// A panic in Decode cancels the race with its cause (see above).
		decode := func(reply Reply) (out intent.Output, err error) {
			if rec := panics.Try(func() { out, err = r.task.Decode(reply) }); rec != nil {
				perr := fmt.Errorf("%w: Decode: %w", ErrTaskPanic, rec.AsError())
				cancel(perr)
				return out, perr
			}
			return out, err
		}
		out, key, flag, reason := memo.judge(reply, func() (intent.Output, uint64, error, error) {
			if keyer, ok := r.task.(VoteKeyer); ok {
				return judgeKeyed(reply, r.agent.maxTokens, r.Flags, func(reply Reply) (out intent.Output, key uint64, err error) {
					if rec := panics.Try(func() { out, key, err = keyer.DecodeKey(reply) }); rec != nil {
						perr := fmt.Errorf("%w: Decode: %w", ErrTaskPanic, rec.AsError())
						cancel(perr)
						return out, 0, perr
					}
					return out, key, err
				}, r.normalize)
			}
			return judge(reply, r.agent.maxTokens, r.Flags, decode, r.normalize)
		})
		if errors.Is(reason, ErrTaskPanic) {
			sm.Err = reason
			return sm
		}
		if flag != nil {
			sm.Flag, why = flag, reason
			if log.Enabled(ctx, slog.LevelDebug) {
				log.DebugContext(ctx, "red flag", "step", step, "sample", i, "flag", flag, "why", reason)
			}
			return sm
		}
		sm.Key = key
		sm.Value = out
		return sm
	}
	cfg, err := r.stepConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: step %d: %w", ErrStep, step, err)
	}
	res, err := r.race(cfg)(raceCtx, cfg, draw)
	rec := &StepRecord{
		Step:   step,
		K:      cfg.K,
		Winner: res.Winner,
		Key:    strconv.FormatUint(res.Key, 16),
		Votes:  make(map[string]int, len(res.Votes)),
		Counts: res.Counts,
		Flags:  res.Flags,
		Usage:  res.Usage,
	}
	for k, v := range res.Votes {
		rec.Votes[strconv.FormatUint(k, 16)] = v
	}
	if len(r.ids) > 1 {
		rec.Models = tally.shares(res.Valid+res.Flagged+res.Errors, res.Key)
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return rec, ctxErr
		}
		if cause := context.Cause(raceCtx); errors.Is(cause, ErrTaskPanic) || errors.Is(cause, ErrPermanent) {
			return rec, fmt.Errorf("%w: step %d: %w", ErrStep, step, cause)
		}
		return rec, fmt.Errorf("%w: step %d: %w", ErrStep, step, err)
	}
	return rec, nil
}

// act runs a decided step's tool intent, applies the winner, journals the
// step and reports it. A side-effect call that will run is journaled as
// pending, durably, before it runs.
func (r *run) act(ctx context.Context, rec *StepRecord, started time.Time) error {
	if ti := rec.Winner.Intent; ti != nil && r.Journal != nil && r.Executor != nil {
		if _, runs := r.Executor.Check(*ti); runs && !r.Executor.ReadOnly(ti.Tool) {
			if err := r.Journal.pending(*rec); err != nil {
				return fmt.Errorf("%w: step %d: the pending side-effect call could not be journaled, so it did not run: %w", ErrStep, rec.Step, err)
			}
		}
	}
	return r.complete(ctx, rec, started)
}

// complete runs the winner's tool intent, if any, applies the winner,
// journals the complete record and reports it.
func (r *run) complete(ctx context.Context, rec *StepRecord, started time.Time) error {
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
	rec.Elapsed = time.Since(started)
	if r.Journal != nil {
		if err := r.Journal.step(rec); err != nil {
			r.rep.addSamples(rec, false) // spent, but not a step of the record
			return fmt.Errorf("%w: step %d was decided but could not be journaled (%w); make room, then resume: that step is decided again", ErrStep, rec.Step, err)
		}
	}
	r.rep.addStep(rec)
	r.rep.Done = done
	r.last = obs
	if r.Progress != nil {
		r.Progress(Event{Step: rec.Step, Record: rec, Report: r.rep})
	}
	if r.Journal != nil && !done && r.Journal.dueCheckpoint() {
		if err := r.checkpoint(rec.Step + 1); err != nil {
			return err
		}
	}
	return nil
}

// cost prices the run: each model's usage at its own price (Priced) or at
// Solver.Price.
func (s *Solver) cost(rep *Report, ms []llms.Model) {
	rep.Cost = 0
	for i := range rep.Models {
		rep.Models[i].Cost = s.priceOf(ms, i).Cost(rep.Models[i].Usage)
		rep.Cost += rep.Models[i].Cost
	}
}

// priceOf is member i's price: its own (Priced) or Solver.Price.
func (s *Solver) priceOf(ms []llms.Model, i int) Price {
	if i < len(ms) {
		if p, ok := ms[i].(Priced); ok {
			return p.Price()
		}
	}
	return s.Price
}

// CostOf returns what rep's usage costs at the solver's prices (each
// model's own, Priced, else Price), without changing rep: the dollars
// spent so far, for a Progress callback whose Report.Cost is not yet set.
func (s *Solver) CostOf(rep *Report) float64 { return s.spentIn(rep, members(s.Model)) }

// spentIn is what rep's usage cost, without changing rep.
func (s *Solver) spentIn(rep *Report, ms []llms.Model) float64 {
	sum := 0.0
	for i := range rep.Models {
		sum += s.priceOf(ms, i).Cost(rep.Models[i].Usage)
	}
	return sum
}

// judgeMemo remembers a step's verdicts by reply: samples of one step that
// reply the same text (as agreeing samples often do) are decoded and keyed
// once; a sample whose reply is being judged by another waits for that
// verdict. Task.Decode is a function of the reply (the Task contract), so
// the verdict is the same; replies with native tool calls, and verdicts of
// a panicking Decode, are not shared. Safe for concurrent use.
type judgeMemo struct {
	mu sync.Mutex
	m  map[replyKey]*verdict
}

// replyKey is a Reply without tool calls, as a map key.
type replyKey struct {
	text, stop string
	in, out    int
	estimated  bool
}

// verdict is one reply's judgement; done is closed once it is set.
type verdict struct {
	done        chan struct{}
	shared      bool // false: the judging draw's Decode panicked
	out         intent.Output
	key         uint64
	flag, cause error
}

func (jm *judgeMemo) judge(r Reply, judge func() (intent.Output, uint64, error, error)) (intent.Output, uint64, error, error) {
	if len(r.ToolCalls) > 0 {
		return judge()
	}
	k := replyKey{r.Text, r.StopReason, r.InputTokens, r.OutputTokens, r.Estimated}
	jm.mu.Lock()
	if v, ok := jm.m[k]; ok {
		jm.mu.Unlock()
		<-v.done
		if v.shared {
			return v.out, v.key, v.flag, v.cause
		}
		return judge()
	}
	if jm.m == nil {
		jm.m = make(map[replyKey]*verdict, 2)
	}
	v := &verdict{done: make(chan struct{})}
	jm.m[k] = v
	jm.mu.Unlock()
	defer close(v.done) // also if judge panics: waiters then judge for themselves
	out, key, flag, cause := judge()
	if !errors.Is(cause, ErrTaskPanic) {
		v.out, v.key, v.flag, v.cause, v.shared = out, key, flag, cause, true
	}
	return out, key, flag, cause
}

// modelTally records each sample of a step by index, to share the step
// out among an ensemble's members.
type modelTally struct {
	n  int
	mu sync.Mutex
	by []vote.Sample[intent.Output] // Value unset
	ok []bool
}

func (t *modelTally) record(i int, s vote.Sample[intent.Output]) {
	if t.n < 2 {
		return
	}
	s.Value = intent.Output{}
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.by) <= i {
		t.by = append(t.by, vote.Sample[intent.Output]{})
		t.ok = append(t.ok, false)
	}
	t.by[i], t.ok[i] = s, true
}

// shares splits the samples among the members: the first committed
// samples (by index) count as valid, flagged or failed, the rest as
// cancelled; winner votes are valid votes for key.
func (t *modelTally) shares(committed int, key uint64) []ModelStep {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]ModelStep, t.n)
	for i, s := range t.by {
		m := &out[i%t.n]
		m.Launched++
		m.Usage.Add(s.Usage)
		switch {
		case i >= committed || !t.ok[i]:
			m.Cancelled++
		case s.Err != nil:
			m.Errors++
		case s.Flag != nil:
			m.Flagged++
		default:
			m.Valid++
			if s.Key == key {
				m.WinnerVotes++
			}
		}
	}
	return out
}

// apply applies a winner to the task, turning a panic into ErrTaskPanic.
func (r *run) apply(w intent.Output, obs *intent.Observation) (done bool, err error) {
	if p := panics.Try(func() { done, err = r.task.Apply(w, obs) }); p != nil {
		err = fmt.Errorf("%w: Apply: %w", ErrTaskPanic, p.AsError())
	}
	return done, err
}

// checkpoint writes a checkpoint for a task that can snapshot itself.
func (r *run) checkpoint(next int) error {
	sn, ok := r.task.(Snapshotter)
	if !ok {
		return nil
	}
	var state json.RawMessage
	var err error
	if p := panics.Try(func() { state, err = sn.Snapshot() }); p != nil {
		err = fmt.Errorf("%w: Snapshot: %w", ErrTaskPanic, p.AsError())
	}
	if err != nil {
		return fmt.Errorf("%w: checkpoint before step %d: %w", ErrStep, next, err)
	}
	return r.Journal.writeCheckpoint(next, state, r.last, *r.rep)
}

// execute runs a winning tool intent.
func (r *run) execute(ctx context.Context, step int, ti *intent.ToolIntent) (intent.Observation, error) {
	if r.Executor == nil {
		return intent.Observation{Tool: ti.Tool, Status: intent.StatusDenied, Reason: intent.ReasonUnavailable,
			Content: "this run has no tools: answer without calling one"}, nil
	}
	ctx, end := r.observeTool(ctx, step, ti)
	obs, err := r.Executor.Execute(ctx, *ti)
	end(obs, err)
	r.logger().DebugContext(ctx, "tool call", "step", step, "tool", ti.Tool, "status", obs.Status, "truncated", obs.Truncated)
	return obs, err
}

// digest hashes what the next prompt sees of an observation, so equal
// calls give equal digests across runs (the duration is left out).
func digest(obs *intent.Observation) string {
	sum := sha256.Sum256([]byte(obs.Text()))
	return hex.EncodeToString(sum[:])
}

// replay restores the journal's run: the last checkpoint, if the task can
// restore it, then every step after it through Task.Apply. It returns a
// pending record that ends the journal, if any, for finish. It writes
// nothing.
func (r *run) replay() (*StepRecord, error) {
	j := r.Journal
	if c := j.checkpoint; c != nil {
		sn, ok := r.task.(Snapshotter)
		if !ok {
			j.fromStart()
		} else {
			var err error
			if p := panics.Try(func() { err = sn.Restore(c.State) }); p != nil {
				err = fmt.Errorf("%w: Restore: %w", ErrTaskPanic, p.AsError())
			}
			if err != nil {
				return nil, fmt.Errorf("%w: %s: restoring the checkpoint before step %d: %w", ErrJournalCorrupt, j.path(), c.Next, err)
			}
			*r.rep = c.Total
			r.rep.Resumed = r.rep.Steps
			r.next, r.last = c.Next, c.Last
		}
	}
	var pending *StepRecord
	err := j.records(func(n int, raw []byte) error {
		if r.rep.Done {
			return j.corrupt(n, "follows the step that finished the task")
		}
		rec, err := decodeRecord(raw)
		if err != nil {
			return j.corrupt(n, "is not a step record: %v", err)
		}
		if pending != nil {
			if rec.Step != pending.Step || rec.Pending {
				return j.corrupt(n, "holds step %d where the pending step %d's record was expected", rec.Step, pending.Step)
			}
			pending = nil
		} else if rec.Step != r.next {
			return j.corrupt(n, "holds step %d where step %d was expected", rec.Step, r.next)
		}
		if rec.Pending {
			if rec.Winner.Intent == nil {
				return j.corrupt(n, "is a pending step without a tool call")
			}
			pending = rec
			return nil
		}
		done, err := r.apply(rec.Winner, rec.Observation)
		if err != nil {
			return fmt.Errorf("%w: replaying step %d (%s:%d): %w", ErrStep, rec.Step, j.path(), n, err)
		}
		r.rep.addStep(rec)
		r.rep.Resumed++
		r.rep.Done = done
		if r.Progress != nil {
			r.Progress(Event{Step: rec.Step, Replayed: true, Record: rec, Report: r.rep})
		}
		r.last, r.next = rec.Observation, r.next+1
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pending != nil && !r.RerunPending {
		return nil, fmt.Errorf("%w: step %d called %s with %s; check its effect, then resume with RerunPending (--rerun-pending) to run that same call again",
			ErrPendingSideEffect, pending.Step, pending.Winner.Intent.Tool, argsText(pending.Winner.Intent.Args))
	}
	return pending, nil
}

// finish completes a step whose side-effect call was pending at the crash:
// exactly the journaled winner's call runs, and exactly that winner is
// applied. Nothing is voted again.
func (r *run) finish(ctx context.Context, rec *StepRecord) error {
	rec.Pending = false
	if err := r.complete(ctx, rec, time.Now()); err != nil {
		return err
	}
	r.next = rec.Step + 1
	return nil
}

func argsText(args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Sprint(args)
	}
	return string(b)
}

// decodeRecord reads a journal step line strictly, with numbers kept as
// json.Number, as intent.Parse gives them, so a replayed winner is the
// value that won.
func decodeRecord(raw []byte) (*StepRecord, error) {
	var rec StepRecord
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value on the line")
	}
	return &rec, nil
}
