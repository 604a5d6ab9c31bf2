package maker

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
)

// KPolicy chooses each step's margin k from the run's own votes, in place
// of the fixed Vote.K (Config.AdaptiveK). maker/adaptive's Policy is the
// one mdap has: it plans every step's k within a failure budget. The step
// loop calls Check and Record once per run, Start once per run (when its
// first step is planned or replayed) and the KPlanner once per step. A nil
// KPolicy keeps the fixed Vote.K.
type KPolicy interface {
	// Check validates the policy and returns the largest margin it will
	// use (the first step's, when nothing is known). An invalid policy is
	// a *FieldError naming its own fields; Config.Validate names them
	// under "AdaptiveK.". Cost: a few comparisons.
	Check() (maxK int, err error)
	// Record is the policy, with its defaults set, as JSON the journal's
	// settings record (Settings.KAuto): a resume whose record differs is
	// refused, naming both. The JSON must be deterministic.
	Record() (json.RawMessage, error)
	// Describe returns the text of a record, for the message of a refused
	// resume and for logs; for JSON it does not read, the JSON itself.
	Describe(record json.RawMessage) string
	// Start begins the plan of a run of task. state is Report.KAuto as
	// the run has it: nil for a run from its start, or what a journal's
	// checkpoint restored (json.RawMessage). An error ends the run.
	Start(task Task, state any) (KPlanner, error)
}

// KPlanner is a KPolicy's plan of one run. Its methods are called from
// the step loop, one at a time.
type KPlanner interface {
	// Plan returns the margin of step (from 0), given the steps observed
	// so far. Over is set when no margin up to the policy's largest keeps
	// its promise (a failure budget): the Solver's escalation policy then
	// acts (by default the run stops with ErrOverBudget).
	Plan(step int) KStep
	// Observe adds a decided step, live or replayed from a journal, to
	// the plan: rec.K is the margin it was decided at, rec.Votes and
	// rec.Valid its votes, rec.Correct its correct votes when the task is
	// a Checker.
	Observe(rec *journal.StepRecord)
	// State is the plan's running state, which the Report carries
	// (Report.KAuto) and a journal's checkpoint saves: JSON-encodable,
	// and restored by Start from that JSON.
	State() any
}

// KStep is a KPlanner's choice for a step.
type KStep struct {
	// K is the step's margin.
	K int
	// Over, when set, says why no margin up to Max keeps the policy's
	// promise; K is then Max.
	Over string
	// Max is the policy's largest margin.
	Max int
}

// Checker is an optional Task extension: a task that knows the correct
// answer to its current step (an oracle, a verifier, a spot check with a
// known answer). Under a KPolicy each step's journal record holds its
// correct votes (journal.StepRecord.Correct), so the policy can estimate p from
// correctness instead of agreement with the winner. It never changes
// which answer wins.
type Checker interface {
	// CorrectAnswer returns the correct answer to the step the task's
	// Prompt asks now, and true; or false when it does not know this
	// step's (a spot-check task checks some steps only). It must not
	// change the task, and must be cheap next to a model call.
	CorrectAnswer() (intent.Output, bool)
}

// planner is the run's KPlanner, started on first use from the state the
// report holds (a checkpoint's, or none).
func (r *run) planner() (KPlanner, error) {
	if r.kplan == nil {
		p, err := r.AdaptiveK.Start(r.task, r.rep.KAuto)
		if err != nil {
			return nil, fmt.Errorf("maker: k policy: %w", err)
		}
		r.kplan = p
		r.rep.KAuto = p.State()
	}
	return r.kplan, nil
}

// stepConfig is the vote configuration of the step to decide: the fixed
// one, or the k policy's for the run so far, with the distinct voters
// the Solver's MinVoters asks for now.
func (r *run) stepConfig(ctx context.Context) (vote.Config, error) {
	cfg, err := r.stepK()
	if err == nil && r.MinVoters != nil {
		cfg.MinVoters = min(max(r.MinVoters(ctx), 1), vote.MaxVoters)
	}
	return cfg, err
}

// stepK is the run's vote.Config at the next step's k (AdaptiveK).
func (r *run) stepK() (vote.Config, error) {
	if r.AdaptiveK == nil {
		return r.cfg, nil
	}
	p, err := r.planner()
	if err != nil {
		return vote.Config{}, err
	}
	plan := p.Plan(r.next)
	k := plan.K
	if plan.Over != "" {
		e := r.Escalation
		switch {
		case e == nil || e.Policy == EscalateStop:
			return vote.Config{}, fmt.Errorf("%w: %s; stopped (escalation policy stop, the default): raise the maximum k, lower the target, use a stronger model, or escalate with raise-k to go on at a larger k", ErrOverBudget, plan.Over)
		case e.Policy == EscalateRaiseK:
			k = max(e.K, 2*plan.Max)
		}
		r.logger().Warn("k auto: over budget, the escalation policy runs the step", "step", r.next, "policy", e.Policy, "k", k, "why", plan.Over)
	}
	cfg := r.Vote
	cfg.K = k
	return cfg.WithDefaults()
}

// checkStep sets rec.Correct, the valid votes for the step's correct
// answer, when the task is a Checker that knows it. Cost: one Key.
func (r *run) checkStep(rec *journal.StepRecord) {
	c, ok := r.task.(Checker)
	if !ok {
		return
	}
	if out, ok := c.CorrectAnswer(); ok {
		if key, err := r.KeyIn(r.task, out); err == nil {
			rec.Correct = new(rec.Votes[strconv.FormatUint(key, 16)])
		}
	}
}

// observe adds a decided step to the k policy's plan (after
// Report.addStep, live or replayed).
func (r *run) observe(rec *journal.StepRecord) error {
	if r.AdaptiveK == nil {
		return nil
	}
	p, err := r.planner()
	if err != nil {
		return err
	}
	p.Observe(rec)
	return nil
}

// checkKPolicy checks c.AdaptiveK (a nil pointer in it is refused, not
// called), and that a race at its largest k fits the vote budget.
func (c Config) checkKPolicy() error {
	if v := reflect.ValueOf(c.AdaptiveK); v.Kind() == reflect.Pointer && v.IsNil() {
		return fielderr.New(configName, "AdaptiveK", fmt.Sprintf("%T(nil)", c.AdaptiveK), "leave AdaptiveK nil for a fixed k, or give it a policy")
	}
	maxK, err := c.AdaptiveK.Check()
	if err != nil {
		return within("AdaptiveK.", err)
	}
	if c.Vote.MaxSamples != 0 && c.Vote.MaxSamples < maxK {
		return &fielderr.Error{Config: configName,
			Fields: []fielderr.Field{{Name: "Vote.MaxSamples", Value: c.Vote.MaxSamples}, {Name: "AdaptiveK.Max", Value: maxK}},
			Fix:    fmt.Sprintf("Vote.MaxSamples cannot hold a race at AdaptiveK.Max: raise it, or leave it 0 (%d times each step's k)", vote.DefaultSamplesPerK)}
	}
	v := c.Vote
	v.K = maxK
	if _, err := v.WithDefaults(); err != nil {
		return within("Vote.", err)
	}
	return nil
}
