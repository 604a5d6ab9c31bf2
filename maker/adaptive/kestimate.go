package adaptive

import (
	"fmt"
	"math"

	"github.com/mdap-go/mdap/internal/stats"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
)

// PTally is adaptive k's evidence about p, kept up step by step: the
// successes among valid votes (correct votes, or votes for the winner;
// Source says which), with the sums that treat steps as clusters, and a
// recent window that weighs each vote down by (1 - 2/Window) per newer
// vote.
type PTally struct {
	Source string `json:"source"`
	// Steps counts the steps with valid votes (the clusters).
	Steps     int `json:"steps"`
	Successes int `json:"successes"`
	Votes     int `json:"votes"`
	// SumXX, SumXN and SumNN are Σx², Σx·n and Σn² over the steps, x a
	// step's successes and n its valid votes: the cluster-robust variance
	// of Successes/Votes, in O(1) per step.
	SumXX float64 `json:"sum_xx"`
	SumXN float64 `json:"sum_xn"`
	SumNN float64 `json:"sum_nn"`
	// WinSuccesses and WinVotes are the window's weighted successes and
	// votes; WinWeight2 the sum of the squared weights (the window's
	// effective size is WinVotes²/WinWeight2).
	WinSuccesses float64 `json:"win_successes"`
	WinVotes     float64 `json:"win_votes"`
	WinWeight2   float64 `json:"win_weight2"`
	// Spread is the steps' beta-binomial statistics, which the plan is
	// fitted from (SpreadFit).
	Spread SpreadTally `json:"spread"`
}

// add counts a step with x successes of n valid votes; window is the
// recent window's effective size.
func (t *PTally) add(x, n, window int) {
	if n <= 0 {
		return
	}
	fx, fn := float64(x), float64(n)
	t.Steps++
	t.Successes += x
	t.Votes += n
	t.SumXX += fx * fx
	t.SumXN += fx * fn
	t.SumNN += fn * fn
	d := math.Pow(1-2/float64(window), fn)
	t.WinSuccesses = t.WinSuccesses*d + fx
	t.WinVotes = t.WinVotes*d + fn
	t.WinWeight2 = t.WinWeight2*d*d + fn
	t.Spread.Add(x, n, 1)
}

// clone returns a deep copy of t.
func (t PTally) clone() PTally {
	t.Spread = t.Spread.Clone()
	return t
}

// KState is adaptive k's running state (maker.Report.KAuto): the evidence since
// the last change point (the whole run if none), the plan fitted from it,
// the change-point test and the failure ledger. A checkpoint saves it; a
// replay rebuilds it.
type KState struct {
	PTally
	FailureBudget
	// Fit is the plan in force (nil before the first step's votes).
	Fit *SpreadFit `json:"fit,omitempty"`
	// Drift is the change-point test's state.
	Drift DriftTest `json:"drift"`
}

// Bounds are what a tally says of p (see Policy).
type Bounds struct {
	// P is the pooled share of successes; Lower its one-sided bound over
	// effective counts (Votes / DesignEffect).
	P, Lower     float64
	DesignEffect float64
	// WindowP and WindowLower are the recent window's share and bound;
	// WindowVotes its effective size.
	WindowP, WindowLower, WindowVotes float64
	// Planning is the smaller of Lower and WindowLower: the bound the
	// step plans with.
	Planning float64
}

// Bounds returns the bounds of t at a's Confidence, for a with defaults
// set. Without votes every bound is 0. Cost: O(1).
func (a Policy) Bounds(t PTally) Bounds {
	var b Bounds
	b.DesignEffect = 1
	if t.Votes <= 0 {
		return b
	}
	n := float64(t.Votes)
	b.P = float64(t.Successes) / n
	if t.Steps >= 2 && b.P > 0 && b.P < 1 {
		ss := t.SumXX - 2*b.P*t.SumXN + b.P*b.P*t.SumNN
		robust := float64(t.Steps) / float64(t.Steps-1) * math.Max(0, ss) / (n * n)
		b.DesignEffect = math.Max(1, robust/(b.P*(1-b.P)/n))
	}
	b.Lower = stats.WilsonLower(b.P, n/b.DesignEffect, a.Confidence)
	b.Planning = b.Lower
	if t.WinVotes > 0 && t.WinWeight2 > 0 {
		b.WindowP = math.Min(1, t.WinSuccesses/t.WinVotes)
		b.WindowVotes = t.WinVotes * t.WinVotes / t.WinWeight2
		b.WindowLower = stats.WilsonLower(b.WindowP, b.WindowVotes/b.DesignEffect, a.Confidence)
		b.Planning = math.Min(b.Planning, b.WindowLower)
	}
	return b
}

// Next returns the margin of step (from 0) for a with defaults set, from
// the state of the steps before it, the per-step failure planned at that
// margin, and whether the margin keeps the failure budget (Plan's
// verdict is KFits). A pure function. Cost: O(log(Max − Floor)).
func (a Policy) Next(step int, st KState) (k int, fail float64, ok bool) {
	p := a.Plan(step, st)
	return p.K, p.Fail, p.Verdict == KFits
}

// Plan is Choose over the failure planned by st's fit (SpreadFit): the
// margin of step (from 0), its verdict and planned failure. A pure
// function. Cost: O(log(Max − Floor)).
func (a Policy) Plan(step int, st KState) StepPlan {
	return a.ChooseFor(step, st.Steps, func(k int) float64 { return st.Fit.failAt(a.Floor, k) }, st.FailureBudget)
}

// Observe adds decided step (from 0) to st: decided at margin k, with
// successes of its valid votes. It charges the ledger by the plan in
// force before the step (Charge), runs the change-point test on the
// step's votes (DriftTest: on a change, the evidence restarts at the
// change point), adds the votes to the tally and refits the plan when due
// (every step of the first 16, every 8th to 256, then every 64th, and at
// a change). A step without valid votes is charged and adds nothing else.
// Cost: O(n) for n valid votes, plus a fit when due (fitSpread).
func (a Policy) Observe(st *KState, step, k, successes, valid int) {
	plan := a.Plan(step, *st)
	plan.K = k
	a.Charge(&st.FailureBudget, plan, st.Fit.failAt(a.Floor, a.Max))
	if valid <= 0 {
		return
	}
	changed := st.Drift.observe(st, a, successes, valid)
	st.add(successes, valid, a.Window)
	if changed || refitDue(st.Steps) {
		fit := fitSpread(st.Spread, st.Steps, a.Floor, a.Max, a.Confidence)
		st.Fit = &fit
	}
}

// refitDue says whether the plan is refitted once a tally has steps
// steps: every step of the first 16, every 8th up to 256, then every
// 64th (a fit costs about a millisecond; the plan moves little between).
func refitDue(steps int) bool {
	return steps <= 16 || (steps <= 256 && steps%8 == 0) || steps%64 == 0
}

// PEstimate is what a run's votes say of p and what the failure budget
// has spent: the report of adaptive k.
type PEstimate struct {
	// Source is SourceCorrectness or SourceAgreement.
	Source    string `json:"source"`
	Successes int    `json:"successes"`
	Valid     int    `json:"valid"`
	// P is Successes / Valid (0 without votes); Lower its pooled bound.
	P            float64 `json:"p"`
	Lower        float64 `json:"lower"`
	DesignEffect float64 `json:"design_effect"`
	// WindowP, WindowLower and WindowVotes are the recent window's.
	WindowP     float64 `json:"window_p"`
	WindowLower float64 `json:"window_lower"`
	WindowVotes float64 `json:"window_votes"`
	// Planning is the smallest mean p of the plan's confidence region
	// (SpreadFit.PLow); Spread the correlation of the steps' difficulty
	// the plan uses (SpreadFit.PlanRho) and SpreadHigh the largest the
	// votes do not exclude.
	Planning   float64 `json:"planning_lower"`
	Spread     float64 `json:"spread"`
	SpreadHigh float64 `json:"spread_high"`
	Confidence float64 `json:"confidence"`
	// Spent is the failure probability charged so far (FailureBudget),
	// Budget 1 - Target; Pending the warm-up steps not yet charged;
	// OverBudget the steps run although no k kept it.
	Spent      float64 `json:"failure_spent"`
	Budget     float64 `json:"failure_budget"`
	Pending    int     `json:"pending,omitempty"`
	OverBudget int     `json:"over_budget"`
	// Changes counts the change points the drift test found (DriftTest);
	// the estimate is of the steps since the last.
	Changes int `json:"changes,omitempty"`
}

// Estimate returns adaptive k's estimate of rep's run (rep.KAuto), for a
// with or without defaults set; the zero estimate's Source is agreement.
func (a Policy) Estimate(rep maker.Report) PEstimate {
	d, err := a.WithDefaults()
	if err == nil {
		a = d
	} else if a.Confidence == 0 {
		a.Confidence, a.Window = DefaultConfidence, DefaultWindow
		if a.Target > 0 && a.Target < 1 {
			a.Confidence = max(0.5, 1-(1-a.Target)/2)
		}
	}
	var st KState
	if saved, err := stateOf(rep.KAuto); err == nil && saved != nil {
		st = *saved
	}
	b := a.Bounds(st.PTally)
	src := st.Source
	if src == "" {
		src = SourceAgreement
	}
	e := PEstimate{
		Source: src, Successes: st.Successes, Valid: st.Votes,
		P: b.P, Lower: b.Lower, DesignEffect: b.DesignEffect,
		WindowP: b.WindowP, WindowLower: b.WindowLower, WindowVotes: b.WindowVotes,
		Planning: st.Fit.pLow(), Confidence: a.Confidence,
		Spent: st.Spent, Budget: a.StepBudget(), Pending: st.Pending, OverBudget: st.OverBudget,
		Changes: st.Drift.Changes,
	}
	if st.Fit != nil {
		e.Spread, e.SpreadHigh = st.Fit.PlanRho, st.Fit.RhoHigh
	}
	return e
}

// String renders the estimate for a terminal.
func (e PEstimate) String() string {
	what := "correct"
	if e.Source != SourceCorrectness {
		what = "agreed with their step's winner (agreement, not correctness)"
	}
	s := fmt.Sprintf("p %.5f from %s (lower bound %.5f at %g confidence, design effect %.2f; %d of %d valid votes %s); recent window of about %.0f votes: p %.5f, lower bound %.5f; planned with p at least %.5f and a spread of difficulty of %.3g (the votes allow up to %.3g); failure budget: %.3g spent of %.3g",
		e.P, e.Source, e.Lower, e.Confidence, e.DesignEffect, e.Successes, e.Valid, what, e.WindowVotes, e.WindowP, e.WindowLower, e.Planning, e.Spread, e.SpreadHigh, e.Spent, e.Budget)
	if e.Pending > 0 {
		s += fmt.Sprintf(", %s at the maximum k not charged (the votes never supported a plan)", words.Plural(e.Pending, "step"))
	}
	if e.OverBudget > 0 {
		s += fmt.Sprintf(", %s over budget (no k up to the maximum kept it: the target is not guaranteed)", words.Plural(e.OverBudget, "step"))
	}
	if e.Changes > 0 {
		s += fmt.Sprintf("; %s (the estimate is of the steps since the last)", words.Plural(e.Changes, "change point"))
	}
	return s
}

// pLow and rho are the plan's smallest mean p and fitted spread, 0
// without a fit.
func (f *SpreadFit) pLow() float64 {
	if f == nil {
		return 0
	}
	return f.PLow
}

func (f *SpreadFit) rho() float64 {
	if f == nil {
		return 0
	}
	return f.PlanRho
}
