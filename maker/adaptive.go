package maker

import (
	"fmt"
	"math"

	"github.com/mdap-go/mdap/vote"
)

// Defaults of AdaptiveK's zero fields.
const (
	// DefaultKFloor is the smallest margin adaptive k uses. It is 2, not
	// 1, because the estimator learns p from the votes that disagree with
	// a step's winner: at k = 1 the first valid vote wins alone, so every
	// step would agree with itself, p would look like 1 and k would stay
	// at 1, blind, for the rest of the run. At k = 2 every wrong vote is
	// seen (it delays the decision), so p stays measured.
	DefaultKFloor = 2
	// DefaultKMax is the largest margin adaptive k uses: the margin of
	// the first step, when nothing is known yet, and a bound on what a
	// run spends per step if the model turns out near coin-flipping (the
	// paper's k_min is 29 at p = 0.64 for a million steps).
	DefaultKMax = 30
	// DefaultKConfidence is the confidence of the lower bound on p that
	// adaptive k plans with.
	DefaultKConfidence = 0.95
)

// AdaptiveK sets each step's margin from the run's own votes instead of
// a fixed Vote.K (Solver.AdaptiveK). Before step i it estimates the
// per-step success rate p conservatively, as a lower confidence bound on
// the share of valid votes that agreed with their step's winner, and
// uses
//
//	k_i = clamp( KMin(Steps - i, p_low, Target), Floor, Max )
//
// the smallest margin with which the steps that remain all succeed with
// probability at least Target if every valid vote is right with
// probability p_low (vote.KMin, against one rival answer: the worst
// case, exact when errors repeat). A step whose bound is at or below 1/2
// (no margin helps) gets Max.
//
// The estimate. A step's valid votes stop at its decision, but each
// vote's chance of being right does not depend on the votes before it,
// so by Wald's identity the winner votes over all valid votes estimate p
// without the stopping bias (a step that a wrong answer won counts its
// wrong votes as agreeing: while the run is healthy such steps are rare,
// and the bound below absorbs them). The bound is Wilson's one-sided score
// bound at Confidence: closed form, O(1) per step, close to the exact
// Clopper-Pearson bound from a few hundred votes on (less conservative
// below, where Max and the warm-up rule anyway). It treats votes as
// independent; when some steps are harder than others it is optimistic
// about the spread of p, which the floor and Target's margin cover.
//
// The prior. At step 0 there is no vote, so the bound is 0 and the step
// runs at Max; each step at a large k casts many votes, so the bound
// tightens within a few steps (with unanimous votes: 30 votes put p_low
// near 0.92, 800 near 0.997). The warm-up costs a few hundred samples in
// all, whatever the run's length.
//
// Replay. The estimate is a function of the Report's totals
// (Report.Agreement: winner votes and valid votes, per model), which a
// resumed run rebuilds from the journal (its steps, or a checkpoint's
// totals), so a resume makes exactly the choices of the uninterrupted
// run; each step's k is journaled (StepRecord.K). The journal's Settings
// record the policy instead of a fixed k (Settings.KAuto), so a resume
// with another Target, Floor, Max, Steps or Confidence is refused.
//
// Vote.K is ignored; Vote.Parallel 0 means each step's k, Vote.MaxSamples
// 0 means vote.DefaultSamplesPerK times each step's k, and a set
// MaxSamples must be at least Max.
type AdaptiveK struct {
	// Target is the probability that every remaining step is decided
	// right, in (0, 1): the whole run's target at step 0.
	Target float64 `json:"target"`
	// Steps is the number of steps of the task (for a task of unknown
	// length, an upper bound such as its step limit); at least 1. Past
	// it, each step plans for itself alone.
	Steps int `json:"steps"`
	// Floor is the smallest k, at least 2 (see DefaultKFloor); 0 means
	// DefaultKFloor.
	Floor int `json:"floor"`
	// Max is the largest k, at least Floor; 0 means DefaultKMax (or
	// Floor, if Floor is larger).
	Max int `json:"max"`
	// Confidence is the one-sided confidence of the lower bound on p, in
	// [0.5, 1); 0 means DefaultKConfidence.
	Confidence float64 `json:"confidence"`
}

// maxAdaptiveK bounds Max, as vote.Config bounds K.
const maxAdaptiveK = 1 << 16

// WithDefaults returns a with its zero fields set to their defaults.
// Errors wrap ErrConfig and name the field: Target outside (0, 1),
// Steps below 1, Floor below 2, Max below Floor or above 65536,
// Confidence outside [0.5, 1).
func (a AdaptiveK) WithDefaults() (AdaptiveK, error) {
	if a.Floor == 0 {
		a.Floor = DefaultKFloor
	}
	if a.Max == 0 {
		a.Max = max(DefaultKMax, a.Floor)
	}
	if a.Confidence == 0 {
		a.Confidence = DefaultKConfidence
	}
	switch {
	case !(a.Target > 0 && a.Target < 1):
		return a, fmt.Errorf("%w: Target %v, want 0 < target < 1", ErrConfig, a.Target)
	case a.Steps < 1:
		return a, fmt.Errorf("%w: Steps %d, want the task's number of steps (at least 1)", ErrConfig, a.Steps)
	case a.Floor < 2:
		return a, fmt.Errorf("%w: Floor %d, want at least 2: at k = 1 no vote ever disagrees with its winner, so p cannot be estimated", ErrConfig, a.Floor)
	case a.Max < a.Floor || a.Max > maxAdaptiveK:
		return a, fmt.Errorf("%w: Max %d, want Floor (%d) to %d", ErrConfig, a.Max, a.Floor, maxAdaptiveK)
	case !(a.Confidence >= 0.5 && a.Confidence < 1):
		return a, fmt.Errorf("%w: Confidence %v, want 0.5 <= confidence < 1", ErrConfig, a.Confidence)
	}
	return a, nil
}

// K returns the margin of step (from 0), given the winner votes and the
// valid votes of the steps before it (Report.Agreement), for an a with
// defaults set (WithDefaults). It is a pure function: the same arguments
// always give the same k. Cost: O(1).
func (a AdaptiveK) K(step, winnerVotes, valid int) int {
	lo := WilsonLower(winnerVotes, valid, a.Confidence)
	if !(lo > 0.5) {
		return a.Max
	}
	k, err := vote.KMin(max(1, a.Steps-step), lo, a.Target)
	if err != nil { // unreachable for lo in (1/2, 1] and a valid Target, but for k above 10⁹
		return a.Max
	}
	return min(a.Max, max(a.Floor, k))
}

// String describes the policy, as the journal's settings show it.
func (a AdaptiveK) String() string {
	return fmt.Sprintf("auto(target=%g steps=%d floor=%d max=%d confidence=%g)", a.Target, a.Steps, a.Floor, a.Max, a.Confidence)
}

// PEstimate is what a run's votes say of p: the share of valid votes that
// agreed with their step's winner, and the lower bound adaptive k plans
// with.
type PEstimate struct {
	WinnerVotes int     `json:"winner_votes"`
	Valid       int     `json:"valid"`
	P           float64 `json:"p"`     // WinnerVotes / Valid; 0 without votes
	Lower       float64 `json:"lower"` // WilsonLower at Confidence
	Confidence  float64 `json:"confidence"`
}

// Estimate returns the p estimate of rep's votes at a's Confidence
// (DefaultKConfidence if unset).
func (a AdaptiveK) Estimate(rep Report) PEstimate {
	c := a.Confidence
	if c == 0 {
		c = DefaultKConfidence
	}
	w, v := rep.Agreement()
	e := PEstimate{WinnerVotes: w, Valid: v, Lower: WilsonLower(w, v, c), Confidence: c}
	if v > 0 {
		e.P = float64(w) / float64(v)
	}
	return e
}

// String renders the estimate for a terminal.
func (e PEstimate) String() string {
	return fmt.Sprintf("p %.5f (lower bound %.5f at %g confidence; %d of %d valid votes agreed with their winner)", e.P, e.Lower, e.Confidence, e.WinnerVotes, e.Valid)
}

// Agreement returns the valid votes that went to their step's winner and
// all valid votes, summed over the models (Report.Models). A resumed run
// rebuilds both from its journal.
func (r Report) Agreement() (winnerVotes, valid int) {
	for _, m := range r.Models {
		winnerVotes += m.WinnerVotes
		valid += m.Valid
	}
	return winnerVotes, valid
}

// WilsonLower is the one-sided lower bound, at confidence c in [0.5, 1), of
// a proportion with successes of trials: Wilson's score bound
//
//	(p̂ + z²/2n - z·sqrt(p̂(1-p̂)/n + z²/4n²)) / (1 + z²/n)
//
// with z the normal quantile of c. It is 0 when trials is 0, in [0, 1]
// always, and n/(n + z²) when every trial succeeded. Cost: O(1).
func WilsonLower(successes, trials int, c float64) float64 {
	if trials <= 0 || successes <= 0 {
		return 0
	}
	n := float64(trials)
	ph := math.Min(1, float64(successes)/n)
	z := math.Sqrt2 * math.Erfinv(2*c-1)
	z2 := z * z
	lo := (ph + z2/(2*n) - z*math.Sqrt(ph*(1-ph)/n+z2/(4*n*n))) / (1 + z2/n)
	return math.Max(0, math.Min(1, lo))
}

// adaptive returns the solver's adaptive policy with its defaults, nil
// for a fixed k. It checks that a race at the policy's Max fits the vote
// budget.
func (s *Solver) adaptive() (*AdaptiveK, error) {
	if s.AdaptiveK == nil {
		return nil, nil
	}
	a, err := s.AdaptiveK.WithDefaults()
	if err != nil {
		return nil, err
	}
	if s.Vote.MaxSamples != 0 && s.Vote.MaxSamples < a.Max {
		return nil, fmt.Errorf("%w: Vote.MaxSamples %d cannot hold a race at Max %d: raise it, or leave it 0 (%d times each step's k)",
			ErrConfig, s.Vote.MaxSamples, a.Max, vote.DefaultSamplesPerK)
	}
	if _, err := a.config(s.Vote, a.Max); err != nil {
		return nil, err
	}
	return &a, nil
}

// config is the vote configuration of a step at margin k.
func (a AdaptiveK) config(base vote.Config, k int) (vote.Config, error) {
	base.K = k
	return base.WithDefaults()
}

// stepConfig is the vote configuration of the step to decide: the fixed
// one, or the adaptive policy's for the votes so far.
func (r *run) stepConfig() (vote.Config, error) {
	if r.auto == nil {
		return r.cfg, nil
	}
	w, v := r.rep.Agreement()
	return r.auto.config(r.Vote, r.auto.K(r.next, w, v))
}
