package maker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// ErrContested: a step was contested and the escalation policy is
// EscalateStop: the run stops there, the step marked for review. It wraps
// ErrStep.
var ErrContested = errors.New("contested step stopped for review")

// ErrOverBudget: under adaptive k (Solver.AdaptiveK), no margin up to the
// policy's Max keeps the failure budget for the next step, and the
// escalation policy is EscalateStop or unset: the run stops before the
// step (see FailureBudget). It is wrapped in ErrStep.
var ErrOverBudget = errors.New("adaptive k: over the failure budget")

// The escalation policies (Escalation.Policy).
const (
	// EscalateRaiseK decides a contested step by a new race at margin
	// Escalation.K.
	EscalateRaiseK = "raise-k"
	// EscalateModel decides a contested step by a new race whose samples
	// come from Escalation.Model (a stronger model, or other members).
	EscalateModel = "model"
	// EscalateStop stops the run at a contested step (ErrContested).
	EscalateStop = "stop"
)

// Escalation is what a run does with a contested step: a step whose race
// is still undecided after After samples (valid and red-flagged, as
// Vote.MaxSamples counts them), far past what a step of the planned p
// needs (a race at margin k that the model gets right with probability
// p takes about k/(2p-1) votes). Such a step is a suspected hard step: on
// a step the model gets wrong more often than right, more votes from the
// same model make the wrong answer win more surely. Contested and
// escalated steps are counted in the Report, journaled (journal.StepRecord) and
// shown in the command's results.
//
// A step decided again (here, or by the WriteRule or the FlagAlarm) gets
// a second race of fresh samples, numbered on from the first race's (so a
// resumed run decides the same), whose votes alone decide it; both races'
// samples count as spent, and the step is journaled Contested and
// Escalated. A hard step whose wrong answer wins
// within After samples is not contested: escalation catches the steps
// that split the votes, not the ones that agree on a wrong answer.
type Escalation struct {
	// Policy is EscalateRaiseK, EscalateModel or EscalateStop.
	Policy string `json:"policy"`
	// After is the samples after which an undecided step is contested;
	// 0 means 4 times the step's k.
	After int `json:"after,omitempty"`
	// K is the second race's margin, at most vote.MaxK; 0: twice the step's k.
	K int `json:"k,omitempty"`
	// Model draws the second race's samples with EscalateModel: a
	// different model, never the one whose votes split. Its members whose
	// identity (ModelIdentity) is one of the run's models are left out,
	// so the second race asks only models the first did not (an Ensemble
	// given here that holds the run's model escalates to its other
	// members); Solve refuses, wrapping ErrConfig, a Model left with no
	// member, since asking the same model again makes a hard step's wrong
	// answer win more surely, not less.
	Model llms.Model `json:"-"`
}

// ModelFor returns the model that draws an EscalateModel race's samples
// in a run of model: e.Model without the members the run already asks
// (by ModelIdentity), as Solve uses it. A command can call it to refuse
// such a setting before a run starts. Errors wrap ErrConfig when no
// member is left. Cost: an identity per member.
func (e *Escalation) ModelFor(model llms.Model) (llms.Model, error) {
	own := map[string]bool{}
	for _, m := range members(model) {
		own[ModelIdentity(m)] = true
	}
	rest := slices.DeleteFunc(slices.Clone(members(e.Model)), func(m llms.Model) bool { return own[ModelIdentity(m)] })
	switch len(rest) {
	case 0:
		return nil, fmt.Errorf("%w: the escalation model (%s) is the run's own model: escalating a contested step to the model whose votes split asks it again; give a different model", ErrConfig, ModelIdentity(e.Model))
	case len(members(e.Model)):
		return e.Model, nil
	case 1:
		return rest[0], nil
	}
	return NewEnsemble(rest...)
}

// check validates e; an error is a *FieldError of "maker.Config"
// naming the field.
func (e *Escalation) check() error {
	switch {
	case e == nil:
		return nil
	case e.Policy != EscalateRaiseK && e.Policy != EscalateModel && e.Policy != EscalateStop:
		return fielderr.New(configName, "Escalation.Policy", string(e.Policy), fmt.Sprintf("use %q, %q or %q", EscalateRaiseK, EscalateModel, EscalateStop))
	case e.After < 0:
		return fielderr.New(configName, "Escalation.After", e.After, "use 0 (4 times the step's k) or more")
	case e.K < 0 || e.K > vote.MaxK:
		return fielderr.New(configName, "Escalation.K", e.K, fmt.Sprintf("use 0 (twice the step's k) to %d", vote.MaxK))
	case e.Policy == EscalateModel && e.Model == nil:
		return fielderr.New(configName, "Escalation.Model", nil, fmt.Sprintf("policy %q needs a Model", EscalateModel))
	}
	return nil
}

// after is the contested threshold for a race at cfg.
func (e *Escalation) after(cfg vote.Config) int {
	if e.After > 0 {
		return max(e.After, cfg.K)
	}
	return 4 * cfg.K
}

// escalation is what happened to a step.
type escalation struct{ contested, escalated bool }

// escalatedRace runs a step's race with the escalation policy: a first race capped
// at the contested threshold, then, if it ran out undecided, the policy.
// draw draws sample i from the given agent.
func (r *run) escalatedRace(ctx context.Context, cfg vote.Config, draw func(a *microagent) vote.Drawer[intent.Output]) (vote.Result[intent.Output], escalation, error) {
	e := r.Escalation
	if e == nil {
		res, err := r.race(ctx, cfg, 0, draw(r.agent))
		return res, escalation{}, err
	}
	first := cfg
	at := e.after(cfg)
	if first.MaxSamples == 0 || first.MaxSamples > at {
		first.MaxSamples = at
	}
	res, err := r.race(ctx, first, 0, draw(r.agent))
	if err == nil || !errors.Is(err, vote.ErrUndecided) || ctx.Err() != nil || first.MaxSamples == cfg.MaxSamples && cfg.MaxSamples != 0 {
		return res, escalation{}, err
	}
	if e.Policy == EscalateStop {
		return res, escalation{contested: true}, fmt.Errorf("%w: %d samples without a lead of %d (%v)", ErrContested, res.Valid+res.Flagged, cfg.K, err)
	}
	second := cfg
	if e.Policy == EscalateRaiseK {
		second = atK(cfg, e.K)
	}
	res, err = r.raceAgain(ctx, second, draw, res)
	return res, escalation{contested: true, escalated: true}, err
}

// atK is cfg for a race that decides a step again at margin k (0: twice
// cfg.K): no sample cap, at most k samples in flight.
func atK(cfg vote.Config, k int) vote.Config {
	cfg.K, cfg.MaxSamples = cmp.Or(k, 2*cfg.K), 0
	cfg.Parallel = min(cfg.Parallel, cfg.K)
	return cfg
}

// raceAgain decides a step again after the race first: a race at cfg
// drawn from the escalation model under EscalateModel, else from the
// run's own, its sample indices numbered on from first's (so that a
// resumed run draws the same samples). The step's counts, usage and flags
// are both races'; its votes, the second's.
func (r *run) raceAgain(ctx context.Context, cfg vote.Config, draw func(a *microagent) vote.Drawer[intent.Output], first vote.Result[intent.Output]) (vote.Result[intent.Output], error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return first, err
	}
	res, err := r.race(ctx, cfg, first.Launched, draw(cmp.Or(r.escAgent, r.agent)))
	res.Counts.Add(first.Counts)
	res.Usage.Add(first.Usage)
	for k, v := range first.Flags {
		if res.Flags == nil {
			res.Flags = map[string]int{}
		}
		res.Flags[k] += v
	}
	return res, err
}

// doubt is why a decided race's win is not taken (the FlagAlarm's alarm,
// the WriteRule's dissent): the run stops with stop, or else the step is
// decided again at margin k (0: twice the step's k).
type doubt struct {
	stop error
	k    int
	why  string
}

// reconsider applies the rules that may doubt a race the escalation
// policy did not contest, the FlagAlarm then the WriteRule: on the first
// doubt, the step is decided again by a fresh race whose samples are
// numbered on from the first's, drawn from the escalation model under
// EscalateModel, else from the run's own (a step already decided again
// is not decided a third time).
func (r *run) reconsider(ctx context.Context, cfg vote.Config, draw func(a *microagent) vote.Drawer[intent.Output], res vote.Result[intent.Output], esc escalation, err error) (vote.Result[intent.Output], escalation, error) {
	if err != nil || esc.contested {
		return res, esc, err
	}
	d := r.alarm(res)
	if d == nil {
		d = r.dissent(res)
	}
	switch {
	case d == nil:
		return res, esc, nil
	case d.stop != nil:
		return res, escalation{contested: true}, d.stop
	}
	r.logger().WarnContext(ctx, "deciding the step again after "+d.why, "step", r.next)
	second := atK(cfg, d.k)
	res, err = r.raceAgain(ctx, second, draw, res)
	if err != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("decided again at k = %d after %s: %w", second.K, d.why, err)
	}
	return res, escalation{contested: true, escalated: true}, err
}
