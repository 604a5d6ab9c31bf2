package adaptive

import (
	"encoding/json"
	"fmt"

	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
)

// Policy is a maker.KPolicy: set it as maker.Config.AdaptiveK.
var _ maker.KPolicy = Policy{}

// Check implements maker.KPolicy: the errors of WithDefaults, and the
// policy's Max.
func (a Policy) Check() (int, error) {
	d, err := a.WithDefaults()
	if err != nil {
		return 0, err
	}
	return d.Max, nil
}

// Record implements maker.KPolicy: the policy with its defaults, as JSON
// (Describe gives its String).
func (a Policy) Record() (json.RawMessage, error) {
	d, err := a.WithDefaults()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("adaptive: the policy cannot be recorded: %w", err)
	}
	return b, nil
}

// Describe implements maker.KPolicy: the String of a recorded Policy, or
// the record itself if it is not one.
func (Policy) Describe(record json.RawMessage) string {
	var d Policy
	if err := json.Unmarshal(record, &d); err != nil {
		return string(record)
	}
	return d.String()
}

// Start implements maker.KPolicy: a plan from a fresh State (its source
// correctness when task is a maker.Checker, else agreement), or from the
// State a journal's checkpoint saved.
func (a Policy) Start(task maker.Task, state any) (maker.KPlanner, error) {
	d, err := a.WithDefaults()
	if err != nil {
		return nil, err
	}
	st, err := stateOf(state)
	if err != nil {
		return nil, err
	}
	if st == nil {
		src := SourceAgreement
		if _, ok := task.(maker.Checker); ok {
			src = SourceCorrectness
		}
		st = &KState{PTally: PTally{Source: src}}
	}
	return &planner{a: d, st: st}, nil
}

// stateOf is the KState of a Report's KAuto: nil for none, the value a
// run keeps, or decoded from a checkpoint's JSON.
func stateOf(state any) (*KState, error) {
	switch s := state.(type) {
	case nil:
		return nil, nil
	case *KState:
		return s, nil
	case json.RawMessage:
		var st KState
		if err := json.Unmarshal(s, &st); err != nil {
			return nil, fmt.Errorf("adaptive: the saved state does not parse: %w", err)
		}
		return &st, nil
	}
	return nil, fmt.Errorf("adaptive: the saved state is a %T, not this policy's", state)
}

// planner is a Policy's plan of one run: the policy with its defaults and
// the run's state, which the Report holds (maker.Report.KAuto).
type planner struct {
	a  Policy
	st *KState
}

// State implements maker.KPlanner: the *KState.
func (p *planner) State() any { return p.st }

// Plan implements maker.KPlanner: Policy.Plan of the run so far; a KOver
// step says why no k keeps the budget.
func (p *planner) Plan(step int) maker.KStep {
	a, st := p.a, *p.st
	plan := a.Plan(step, st)
	out := maker.KStep{K: plan.K, Max: a.Max}
	if plan.Verdict != KOver {
		return out
	}
	left := max(1, a.Steps-step)
	why := fmt.Sprintf("no k up to the maximum %d keeps the failure budget of %.3g: %.3g spent", a.Max, a.StepBudget(), st.Spent)
	if st.Pending > 0 {
		why += fmt.Sprintf(", %s run at the maximum before the votes supported a plan (%.3g more at the plan's failure there)", words.Plural(st.Pending, "step"), float64(st.Pending)*plan.Fail)
	}
	why += fmt.Sprintf(", %d steps left at a planned failure of %.3g each even at k = %d (p at least %.4g, spread of difficulty %.3g)",
		left, plan.Fail, a.Max, st.Fit.pLow(), st.Fit.rho())
	out.Over = why
	return out
}

// Observe implements maker.KPlanner: Policy.Observe with the step's
// successes (its correct votes under SourceCorrectness, else its votes
// for the winner). A step a Checker did not check is charged and not
// counted.
func (p *planner) Observe(rec *journal.StepRecord) {
	x := rec.Votes[rec.Key]
	if p.st.Source == SourceCorrectness {
		if rec.Correct == nil { // an unchecked step: charged, not counted
			p.a.Observe(p.st, rec.Step, rec.K, 0, 0)
			return
		}
		x = *rec.Correct
	}
	p.a.Observe(p.st, rec.Step, rec.K, x, rec.Valid)
}

// Of returns the Policy a maker.KPolicy is (a Policy or a *Policy), and
// false for another policy or none.
func Of(p maker.KPolicy) (Policy, bool) {
	switch a := p.(type) {
	case Policy:
		return a, true
	case *Policy:
		if a != nil {
			return *a, true
		}
	}
	return Policy{}, false
}
