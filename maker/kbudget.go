package maker

import "math"

// StepFailure is the probability that a race with margin k ends on a
// wrong answer when each valid vote is right with probability p and every
// wrong vote goes to one rival answer: r^k / (1 + r^k) with r = (1-p)/p,
// that is 1 - vote.PStep(p, k). One rival is the worst case for this rate
// (wrong votes spread over several answers only make the right answer
// likelier to win). It is 1 for p <= 0, 0 for p >= 1, 1/2 at p = 1/2, and
// decreasing in p and (for p > 1/2) in k. Cost: O(1).
func StepFailure(p float64, k int) float64 {
	switch {
	case !(p > 0):
		return 1
	case p >= 1:
		return 0
	}
	rk := math.Pow((1-p)/p, float64(k))
	if math.IsInf(rk, 1) {
		return 1
	}
	return rk / (1 + rk)
}

// FailureBudget is adaptive k's ledger of the whole run's failure
// probability: the failure each decided step spent, at the lower bound on
// p in force when its k was chosen, against the budget 1 - Target.
//
// The rule (Choose): step i of Steps, with the bound b_i in force and
// Spent charged so far, gets the smallest k in [Floor, Max] with
//
//	Spent + (Steps - i) · StepFailure(b_i, k) <= 1 - Target
//
// that is, what the run has spent plus what the steps that remain would
// spend at this k, if the bound held for them, stays within the budget.
// The step is then charged StepFailure(b_i, k) (Charge). By induction
// Spent never exceeds 1 - Target while every step finds such a k (at
// step i the chosen k satisfies the rule, so Spent after it is at most
// 1 - Target - (Steps-i-1)·StepFailure(b_i, k)); and the k of step i stays
// admissible at step i+1 when the bound has not fallen, so a k is found
// whenever the bound does not drop faster than Max can absorb. So, by the
// union bound, when every step's true p is at least the bound charged for
// it and each step found its k, the whole run is wrong with probability at
// most Spent <= 1 - Target (TestFailureBudgetScheduleExact computes it
// exactly).
//
// A step whose bound is at or below 1/2 (no margin is known to help: the
// first step, before any vote) runs at Max and cannot be charged at that
// bound (StepFailure is then at least 1/2, the whole budget). It is held
// Pending and charged at the first bound above 1/2 (Charge's after): a
// bound from votes that include its own, at Max, so a tiny charge. A step
// for which no k in [Floor, Max] keeps the rule runs at Max and is counted
// in OverBudget: the guarantee does not hold for that run, and the report
// says so. Past Steps (a task longer than planned) each step plans as if
// it were the last.
//
// The zero value holds nothing spent. The ledger is plain data, so a
// Report carries it and a journal checkpoint saves it.
type FailureBudget struct {
	// Spent is the failure charged so far, by the union bound.
	Spent float64 `json:"spent"`
	// Pending counts steps run at Max without a bound above 1/2, not yet
	// charged.
	Pending int `json:"pending,omitempty"`
	// OverBudget counts steps for which no k up to Max kept the rule.
	OverBudget int `json:"over_budget,omitempty"`
}

// Choose returns the margin of step (from 0) for a with defaults set
// (WithDefaults), given the bound on p in force and the ledger, and
// whether that margin keeps the rule (see FailureBudget). It is a pure
// function. Cost: O(log(Max - Floor)).
func (a AdaptiveK) Choose(step int, bound float64, b FailureBudget) (k int, ok bool) {
	if !(bound > 0.5) {
		return a.Max, false
	}
	left := float64(max(1, a.Steps-step))
	budget := 1 - a.Target
	fits := func(k int) bool { return b.Spent+left*StepFailure(bound, k) <= budget }
	if !fits(a.Max) {
		return a.Max, false
	}
	// StepFailure falls as k grows (bound > 1/2): the smallest k that
	// fits, by bisection.
	lo, hi := a.Floor, a.Max
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, true
}

// Charge records a decided step in the ledger: k its margin, before the
// bound in force when k was chosen, after the bound once the step's own
// votes are counted. A step with a bound above 1/2 is charged
// StepFailure(before, k); one without waits in Pending, and the Pending
// steps are charged at after (at Max) as soon as after is above 1/2.
// ok is Choose's verdict for the step: false with a bound above 1/2
// counts the step in OverBudget.
func (a AdaptiveK) Charge(b *FailureBudget, k int, before, after float64, ok bool) {
	if before > 0.5 {
		b.Spent += StepFailure(before, k)
		if !ok {
			b.OverBudget++
		}
	} else {
		b.Pending++
	}
	if b.Pending > 0 && after > 0.5 {
		b.Spent += float64(b.Pending) * StepFailure(after, a.Max)
		b.Pending = 0
	}
}
