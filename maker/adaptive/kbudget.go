package adaptive

import "math"

// StepFailure is the probability that a race with margin k ends on a
// wrong answer when each valid vote is right with probability p and every
// wrong vote goes to one rival answer: r^k / (1 + r^k) with r = (1-p)/p,
// that is 1 - laws.PStep(p, k). One rival is the worst case for this rate
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
// probability: the failure each decided step was charged, by the plan in
// force when its k was chosen, against the steps' budget
// (Policy.StepBudget: half of what 1 - Target leaves once the
// estimates' miss 1 - Confidence is taken, the other half a margin, so
// that under the plan's model the whole run fails with probability at
// most 1 - Target).
//
// The rule (ChooseFor): step i of Steps, with F(k) the per-step failure
// the plan charges at margin k (an upper confidence bound, see
// SpreadFit), Spent charged so far and Pending steps not yet charged,
// gets the smallest k in [Floor, Max] with
//
//	Spent + Pending · F(Max) + (Steps - i) · F(k) <= StepBudget
//
// that is, what the run has spent, plus the steps run before the votes
// supported a plan, plus what the steps that remain would spend at this
// k if the plan held for them, stays within the budget. The step is then
// charged F(k), and the Pending steps F(Max) each (Charge). So Spent never
// exceeds the budget: a step is charged only when the rule held for it,
// and by the union bound the whole run is wrong with probability at most
// Spent when each step's failure is at most what it was charged, plus
// 1 - Confidence for the plan's estimates (TestFailureBudgetScheduleExact
// computes it exactly for known p; TestAdaptiveKMonteCarloGuarantee bounds
// it from runs).
//
// When no k keeps the rule there are two cases. While the evidence is
// young (its tally has fewer than WarmupSteps steps, or an eighth of
// Steps if that is fewer: the run's start, or a
// change point, see DriftTest), the votes cannot yet exclude a spread of
// difficulty that no k could meet, so the step runs at Max and waits in
// Pending (KWarmup); it is charged with the first step that keeps the
// rule. Otherwise (KOver) the budget cannot be kept: the run's escalation
// policy acts (maker.Config.Escalation: by default, and with maker.EscalateStop, the
// run stops with maker.ErrOverBudget before the step; with maker.EscalateRaiseK the
// step runs at the escalation's k, with maker.EscalateModel at Max, each
// charged and counted in OverBudget, and the report says the target is
// not guaranteed). A run never goes over its budget silently. Past Steps
// (a task longer than planned) each step plans as if it were the last.
//
// The zero value holds nothing spent. The ledger is plain data, so a
// Report carries it and a journal checkpoint saves it.
type FailureBudget struct {
	// Spent is the failure charged so far, by the union bound.
	Spent float64 `json:"spent"`
	// Pending counts warm-up steps run at Max, not yet charged.
	Pending int `json:"pending,omitempty"`
	// OverBudget counts steps run although no k kept the rule (an
	// escalation policy other than stop ran them).
	OverBudget int `json:"over_budget,omitempty"`
}

// WarmupSteps is the most steps of evidence the budget waits for before
// a step that no k fits stops the run (or escalates): below it, the step
// runs at Max and is charged later (FailureBudget). A task of Steps steps
// waits for at most an eighth of them (at least one step), so a short
// run cannot end with every step waiting.
const WarmupSteps = 256

// warmup is the evidence a's budget waits for (WarmupSteps).
func (a Policy) warmup() int { return max(1, min(WarmupSteps, a.Steps/8)) }

// KVerdict is the budget rule's verdict on a step (StepPlan).
type KVerdict int

const (
	// KFits: a k in [Floor, Max] keeps the rule.
	KFits KVerdict = iota
	// KWarmup: no k keeps it yet, the evidence is young: Max, charged
	// later.
	KWarmup
	// KOver: no k keeps it: the escalation policy acts.
	KOver
)

// StepPlan is the budget rule's choice for a step.
type StepPlan struct {
	// K is the step's margin (Max unless the verdict is KFits).
	K int
	// Fail is the per-step failure the plan charges at K.
	Fail    float64
	Verdict KVerdict
}

// Choose returns the margin of step (from 0) for a with defaults set,
// with the per-step failure planned as StepFailure(bound, k) (steps all
// at a known p of at least bound), and whether that margin keeps the rule
// (see FailureBudget). It is ChooseFor with no warm-up: a pure function.
// Cost: O(log(Max - Floor)).
func (a Policy) Choose(step int, bound float64, b FailureBudget) (k int, ok bool) {
	p := a.ChooseFor(step, a.warmup(), func(k int) float64 { return StepFailure(bound, k) }, b)
	return p.K, p.Verdict == KFits
}

// ChooseFor applies the rule (see FailureBudget) to step (from 0), with
// fail(k) the per-step failure planned at k (non-increasing in k),
// evidence the steps of the tally the plan comes from, and ledger b. A
// pure function. Cost: O(log(Max - Floor)) calls of fail.
func (a Policy) ChooseFor(step, evidence int, fail func(k int) float64, b FailureBudget) StepPlan {
	left := float64(max(1, a.Steps-step))
	budget := a.StepBudget()
	base := b.Spent + float64(b.Pending)*fail(a.Max)
	fits := func(k int) bool { return base+left*fail(k) <= budget }
	if !fits(a.Max) {
		v := KOver
		if evidence < a.warmup() {
			v = KWarmup
		}
		return StepPlan{K: a.Max, Fail: fail(a.Max), Verdict: v}
	}
	// fail does not rise with k: the smallest k that fits, by bisection.
	lo, hi := a.Floor, a.Max
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return StepPlan{K: lo, Fail: fail(lo), Verdict: KFits}
}

// Charge records a decided step in the ledger by its plan (p.Fail the
// failure planned at the k it ran at) and maxFail, the failure planned at
// Max by the same plan: a KFits or KOver step is charged p.Fail and the
// Pending steps maxFail each; a KWarmup step waits in Pending. A KOver
// step is counted in OverBudget.
func (a Policy) Charge(b *FailureBudget, p StepPlan, maxFail float64) {
	if p.Verdict == KWarmup {
		b.Pending++
		return
	}
	b.Spent += float64(b.Pending)*maxFail + p.Fail
	b.Pending = 0
	if p.Verdict == KOver {
		b.OverBudget++
	}
}
