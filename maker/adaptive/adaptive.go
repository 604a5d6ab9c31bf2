package adaptive

import (
	"fmt"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/vote"
)

// Defaults of Policy's zero fields.
const (
	// DefaultFloor is the smallest margin adaptive k uses. No test sees
	// a drop of p before the votes show it, so the step on which p falls
	// runs at the k planned for the old p, the floor when p was high: a
	// drop from 0.9999 to 0.8 makes a step at k = 2 fail 5.9% of the time
	// (more than a 5% allowance), at k = 4 0.39% (docs/calibrate.md has
	// the runs). It is at least 2: with agreement at k = 1 the first valid
	// vote wins alone, so no vote ever disagrees with its winner.
	DefaultFloor = 4
	// DefaultMax is the largest margin adaptive k uses: the margin of
	// the first step, when nothing is known yet, and a bound on what a
	// run spends per step if the model turns out near coin-flipping (the
	// paper's k_min is 29 at p = 0.64 for a million steps).
	DefaultMax = 30
	// DefaultConfidence is the confidence of adaptive k's estimates
	// where no target sets one. A Policy's Confidence 0 is not this
	// but 1 - (1 - Target)/2 (0.975 at the default target 0.95), so that
	// the estimates' miss comes out of the target's allowance.
	DefaultConfidence = 0.95
	// DefaultWindow is the effective size, in valid votes, of the recent
	// window whose bound stands beside the pooled one (Policy.Window).
	DefaultWindow = 500
)

// The sources of adaptive k's estimate (PEstimate.Source).
const (
	// SourceCorrectness: each valid vote was checked against the step's
	// correct answer (the task is a Checker).
	SourceCorrectness = "correctness"
	// SourceAgreement: each valid vote was compared with its step's
	// winner. It is not correctness: a step a wrong answer won counts its
	// wrong votes as agreeing, so a model mostly wrong with one favourite
	// wrong answer looks good (at p = 0.3 with one rival it reads 0.7).
	SourceAgreement = "agreement"
)

// Policy sets each step's margin from the run's own votes instead of
// a fixed Vote.K (maker.Config.AdaptiveK), within a failure budget: the whole
// run's failure probability, charged step by step at the k used by the
// plan then in force, stays within the steps' budget (StepBudget: half of
// what 1 - Target leaves once the estimates' own miss 1 - Confidence is
// taken, 0.0125 at the defaults), and when no k up to Max keeps
// it the escalation policy acts (by default the run stops with
// maker.ErrOverBudget). See FailureBudget for the rule, TestFailureBudget* for
// its checks and TestAdaptiveKMonteCarloGuarantee for the runs.
//
// The estimate. Where the task can check an answer (it implements
// Checker: Towers of Hanoi does), a vote counts as a success when it is
// the step's correct answer; otherwise when it agrees with the step's
// winner, which is agreement, not correctness (SourceAgreement says what
// it misses), and the report says which.
//
// The plan (SpreadFit). Steps differ in difficulty and a race's failure
// is convex in p, so the mean p understates it. The run fits a
// beta-binomial model (mean p, correlation Rho) to its steps' votes; a
// race stops on its votes, but the stopping rule leaves the likelihood
// unchanged. The failure planned at k is the mean StepFailure over the
// fitted Beta at the smallest mean p of its confidence region; the spread
// counts once its log-likelihood beats no spread's by 5 (a pretest).
// Young evidence runs at Max and is charged later (FailureBudget's
// warm-up), so a few early steps cannot drive the plan.
//
// Drift (DriftTest). A CUSUM test on the steps' votes against the fitted
// model finds a drop in p within a step or two of a large one; the
// evidence then restarts from the change point. No test sees the step on
// which p falls: the Floor (default 4) is what holds it.
//
// Reported beside the plan: the pooled share with a cluster-robust Wilson
// bound and a recent window (votes weighed down exponentially, about
// Window of them in effect), as before; they no longer drive k.
//
// Replay. The estimate and the ledger live in the Report (maker.Report.KAuto),
// updated step by step from journaled fields (votes, k, correct votes), so
// a resumed run rebuilds them from its journal (its steps, or a
// checkpoint's state) and makes exactly the choices of the uninterrupted
// run; each step's k is journaled (journal.StepRecord.K). The journal's Settings
// record the policy instead of a fixed k (maker.Settings.KAuto), so a resume
// with another Target, Floor, Max, Steps, Confidence or Window is refused.
//
// Vote.K is ignored; Vote.Parallel 0 means each step's k, Vote.MaxSamples
// 0 means vote.DefaultSamplesPerK times each step's k, and a set
// MaxSamples must be at least Max.
type Policy struct {
	// Target is the probability, in (0, 1), that the whole run is
	// decided right that the failure budget (1 - Target) plans for.
	Target float64 `json:"target"`
	// Steps is the number of steps of the task (for a task of unknown
	// length, an upper bound such as its step limit); at least 1. Past
	// it, each step plans for itself alone.
	Steps int `json:"steps"`
	// Floor is the smallest k, at least 2 (see DefaultFloor); 0 means
	// DefaultFloor.
	Floor int `json:"floor"`
	// Max is the largest k, at least Floor; 0 means DefaultMax (or
	// Floor, if Floor is larger).
	Max int `json:"max"`
	// Confidence is the one-sided confidence of the plan's estimates, in
	// [0.5, 1) and above Target; 0 means 1 - (1 - Target)/2. The chance
	// that the estimates are wrong comes out of the run's failure
	// allowance: the steps' budget is half of (1 - Target) - (1 -
	// Confidence), the other half a margin, so that under the plan's
	// model the whole run is wrong with probability at most 1 - Target
	// (see FailureBudget, StepBudget).
	Confidence float64 `json:"confidence"`
	// Window is the reported recent window's effective size in valid
	// votes, at least 10; 0 means DefaultWindow. It is reported beside
	// the plan (PEstimate.WindowP); drift is the change-point test's
	// (DriftTest).
	Window int `json:"window,omitempty"`
}

// adaptiveName is where Policy's field errors come from.
const adaptiveName = "adaptive.Policy"

// maxAdaptiveK bounds Max: vote.Config's bound of K.
const maxAdaptiveK = vote.MaxK

// WithDefaults returns a with its zero fields set to their defaults.
// Errors are a *FieldError of "adaptive.Policy" (wrapping ErrConfig)
// naming the field: Target outside (0, 1),
// Steps below 1, Floor below 2, Max below Floor or above vote.MaxK,
// Confidence outside [0.5, 1) or not above Target, Window below 10.
func (a Policy) WithDefaults() (Policy, error) {
	if a.Floor == 0 {
		a.Floor = DefaultFloor
	}
	if a.Max == 0 {
		a.Max = max(DefaultMax, a.Floor)
	}
	if a.Confidence == 0 && a.Target > 0 && a.Target < 1 {
		a.Confidence = max(0.5, 1-(1-a.Target)/2)
	}
	if a.Window == 0 {
		a.Window = DefaultWindow
	}
	switch {
	case !(a.Target > 0 && a.Target < 1):
		return a, fielderr.New(adaptiveName, "Target", a.Target, "use a target success rate above 0 and below 1")
	case a.Steps < 1:
		return a, fielderr.New(adaptiveName, "Steps", a.Steps, "use the task's number of steps (at least 1)")
	case a.Floor < 2:
		return a, fielderr.New(adaptiveName, "Floor", a.Floor, "use at least 2: at k = 1 no vote ever disagrees with its winner, so p cannot be estimated")
	case a.Max < a.Floor || a.Max > maxAdaptiveK:
		return a, fielderr.New(adaptiveName, "Max", a.Max, fmt.Sprintf("use Floor (%d) to %d", a.Floor, maxAdaptiveK))
	case !(a.Confidence >= 0.5 && a.Confidence < 1):
		return a, fielderr.New(adaptiveName, "Confidence", a.Confidence, "use 0.5 to below 1")
	case !(a.Confidence > a.Target):
		return a, &fielderr.Error{Config: adaptiveName, Fields: []fielderr.Field{{Name: "Confidence", Value: a.Confidence}, {Name: "Target", Value: a.Target}}, Fix: "Confidence must be above Target: the estimates' miss, 1 - Confidence, comes out of the failure allowance 1 - Target"}
	case a.Window < 10:
		return a, fielderr.New(adaptiveName, "Window", a.Window, "use at least 10 votes")
	}
	return a, nil
}

// StepBudget is the failure budget of the steps (FailureBudget), for a
// with defaults set: half of what the run's allowance 1 - Target leaves
// once the estimates' miss 1 - Confidence is taken, ((1 - Target) -
// (1 - Confidence))/2, 0.0125 at the defaults. The other half is a margin
// for what the plan's model does not capture: the steps decided before a
// drop of p is seen, the shape of the spread. Spending the whole
// remainder, the runs of TestAdaptiveKMonteCarloGuarantee failed 3.5% (p
// 0.8) and 4% (late drift) of the time on held-out seeds: within 5%, but
// too close for a 95% upper bound to show it.
func (a Policy) StepBudget() float64 { return ((1 - a.Target) - (1 - a.Confidence)) / 2 }

// String describes the policy, as the journal's settings show it.
func (a Policy) String() string {
	return fmt.Sprintf("auto(target=%g steps=%d floor=%d max=%d confidence=%g window=%d)", a.Target, a.Steps, a.Floor, a.Max, a.Confidence, a.Window)
}
