package maker

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/vote"
)

// ErrWriteDissent: a step's winner is a side-effect call that was not
// unanimous among the first k valid votes, and the escalation policy is
// EscalateStop: the run stops before the call runs. It wraps ErrContested
// and ErrStep.
var ErrWriteDissent = fmt.Errorf("%w: a side-effect call without a unanimous vote", ErrContested)

// WriteRule is the stricter vote for side effects. A step whose winner is
// a tool intent the Executor would run and that is not read-only (a write,
// a deploy, a shell: what the journal marks pending before it runs) runs
// only when no valid vote among the first k disagreed: the race was
// decided by its first k valid votes, all for the winner. Otherwise the
// call does not run on that win: the step is decided again at margin K as
// an escalated step is (see Escalation), or, under EscalateStop, the run
// stops with ErrWriteDissent naming the step. The second race's winner
// runs as decided (a write there has won by the larger margin). A step
// already escalated is not decided a third time. The zero value is the
// rule at twice the step's k.
type WriteRule struct {
	// AnyMargin turns the rule off: a side-effect call runs on a
	// first-to-ahead-by-k win like any answer.
	AnyMargin bool `json:"any_margin,omitempty"`
	// K is the margin of the second race; 0 means twice the step's k,
	// negative is refused. Under EscalateRaiseK with an Escalation.K and
	// no K here, the escalation's K.
	K int `json:"k,omitempty"`
	// Categories is the second race's margin per tool category, for a
	// winner whose tool is of that category; it takes the place of K
	// there. A category must be one with side effects (categories.All
	// less categories.ReadOnly) and its margin at least 1.
	Categories map[categories.Category]int `json:"categories,omitempty"`
}

// check validates w; an error is a *FieldError naming the field.
func (w WriteRule) check() error {
	if w.K < 0 {
		return fielderr.New(configName, "Writes.K", w.K, "use 0 (twice the step's k) or more")
	}
	for _, c := range slices.Sorted(maps.Keys(w.Categories)) {
		if !c.Valid() || c.ReadOnly() {
			return fielderr.New(configName, "Writes.Categories", string(c), "name a category with side effects: "+sideEffectCategories())
		}
		if k := w.Categories[c]; k < 1 {
			return fielderr.New(configName, "Writes.Categories["+string(c)+"]", k, "use a margin of 1 or more")
		}
	}
	return nil
}

// sideEffectCategories lists the categories a write rule may name.
func sideEffectCategories() string {
	var names []string
	for _, c := range categories.All() {
		if !c.ReadOnly() {
			names = append(names, string(c))
		}
	}
	return strings.Join(names, ", ")
}

// kFor is the second race's margin for a winner calling tool (0: the
// default), from Categories, else K.
func (w WriteRule) kFor(ex interface {
	Lookup(string) (categories.Entry, bool)
}, tool string) int {
	if ex != nil && len(w.Categories) > 0 {
		if en, ok := ex.Lookup(tool); ok {
			if k, ok := w.Categories[en.Category]; ok {
				return k
			}
		}
	}
	return w.K
}

// setting is the rule as the journal's settings record it ("" for the
// default, so journals written before the rule keep their settings).
func (w WriteRule) setting() string {
	if w.AnyMargin {
		return "any-margin"
	}
	var s string
	if w.K > 0 {
		s = fmt.Sprintf("unanimous-or-k%d", w.K)
	}
	for _, c := range slices.Sorted(maps.Keys(w.Categories)) {
		if s == "" {
			s = "unanimous"
		}
		s += fmt.Sprintf(" %s=k%d", c, w.Categories[c])
	}
	return s
}

// isWrite reports whether winner's tool intent would run with a side
// effect.
func (r *run) isWrite(winner intent.Output) bool {
	ti := winner.Intent
	if ti == nil || r.Executor == nil {
		return false
	}
	_, runs := r.Executor.Check(*ti)
	return runs && !r.Executor.ReadOnly(ti.Tool)
}

// unanimous reports whether a decided race's first k valid votes were all
// for its winner: a race at margin k whose votes hold no other key (the
// race tallies in index order and stops at the decision, so that is the
// first k votes, all for the winner). Under Config.ToolFirst the caller
// also asks that no sample proposed another tool (vote.ErrOtherGroup).
func unanimous(res vote.Result[intent.Output]) bool {
	for k, v := range res.Votes {
		if k != res.Key && v > 0 {
			return false
		}
	}
	return true
}

// dissent is the WriteRule's doubt of a decided race, nil when its win
// may be taken: a side-effect winner without a unanimous vote is decided
// again, or stopped under EscalateStop.
func (r *run) dissent(res vote.Result[intent.Output]) *doubt {
	if r.Writes.AnyMargin || !r.isWrite(res.Winner) || unanimous(res) && res.Flags[vote.ErrOtherGroup.Error()] == 0 {
		return nil
	}
	ti := res.Winner.Intent
	why := fmt.Sprintf("a side-effect call (%s) won %d of %d valid votes, %d against", ti.Tool, res.Votes[res.Key], res.Valid, res.Valid-res.Votes[res.Key])
	e := r.Escalation
	if e != nil && e.Policy == EscalateStop {
		return &doubt{stop: fmt.Errorf("%w: %s: stopped for review (escalation policy stop)", ErrWriteDissent, why)}
	}
	k := r.Writes.kFor(r.Executor, ti.Tool)
	if k == 0 && e != nil && e.Policy == EscalateRaiseK {
		k = e.K
	}
	return &doubt{k: k, why: why}
}
