// Package laws holds the scaling laws of first-to-ahead-by-k voting: how
// large k must be and what it costs ([KMin], [PStep], [PFull],
// [ExpectedSamples], [ExpectedCost]). They plan a run (maker kmin,
// calibration, the benchmarks); the vote itself (package vote) does not
// use them.
//
// With per-vote success p > 1/2 against a single rival answer, r = (1-p)/p,
// margin k and s steps (Meyerson et al., "Solving a Million-Step LLM Task
// with Zero Errors", 2025):
//
//	P(step right)  = 1 / (1 + r^k)                          PStep
//	P(all right)   = (1 + r^k)^-s                           PFull
//	k_min          = ceil(ln(t^(-1/s) - 1) / ln r)          KMin, grows as ln s
//	E[votes/step]  = k/(2p-1) * (1 - r^k)/(1 + r^k)         ExpectedSamples
//
// Divide E by the valid-format rate for samples drawn ([ExpectedCost]). The
// functions stay accurate for millions of steps and targets within 1e-15 of
// 1 (expm1 and log1p where the naive forms round to 0 or 1). At the paper's
// 1,048,575 steps and a 95% target, k_min is 3 at p = 0.9978 and 29 at
// p = 0.6429.
//
// The laws assume one rival: every wrong vote for the same wrong answer.
// That is the worst case for the wrong-winner rate, not for cost; package
// vote/rivals computes both when wrong votes spread over several answers.
package laws

import (
	"errors"
	"fmt"
	"math"
)

// ErrOutOfRange: an argument of KMin, ExpectedCost, rivals.PStep or
// rivals.ExpectedSamples is outside its domain.
var ErrOutOfRange = errors.New("argument out of range")

// maxKMin bounds what KMin reports: past it p is too close to 1/2 for
// voting to be a plan.
const maxKMin = 1_000_000_000

// The scaling laws of first-to-ahead-by-k voting (Meyerson et al. 2025), for
// a step whose valid votes are right with probability p and otherwise go to
// one rival answer; r = (1-p)/p. For the wrong-winner rate (PStep, PFull,
// KMin) one rival is the worst case: wrong votes spread over several
// answers only make the right answer likelier to win. For cost
// (ExpectedSamples, ExpectedCost) it is not: spread wrong votes can make a
// race longer (see rivals.ExpectedSamples, which takes the rival structure as
// an input, and rivals.PStep).
//
// The float functions take p in [0, 1] and return NaN for an argument
// outside its domain (p outside [0, 1] or NaN, k < 1, steps < 0); the
// functions that plan (KMin, ExpectedCost) return errors instead.

// PStep is the probability that a race with margin k ends on the right
// answer: 1 / (1 + r^k). It is p for k = 1, 1/2 for p = 1/2, and tends to 1
// as k grows for any p > 1/2. NaN outside the domain (see above).
func PStep(p float64, k int) float64 {
	if !unit(p) || k < 1 {
		return math.NaN()
	}
	return 1 / (1 + math.Pow((1-p)/p, float64(k)))
}

// PFull is the probability that all of steps independent races with margin
// k end on the right answer: (1 + r^k)^-steps, computed as
// exp(-steps * log1p(r^k)) so that it stays accurate for millions of steps
// and r^k far below machine epsilon. PFull of 0 steps is 1. NaN outside the
// domain (steps < 0, see also above).
func PFull(steps, k int, p float64) float64 {
	if !unit(p) || k < 1 || steps < 0 {
		return math.NaN()
	}
	if steps == 0 {
		return 1
	}
	rk := math.Pow((1-p)/p, float64(k))
	if math.IsInf(rk, 1) {
		return 0
	}
	return math.Exp(-float64(steps) * math.Log1p(rk))
}

// ExpectedSamples is the expected number of valid votes a race with margin
// k takes against one rival answer: gambler's ruin with barriers at +k and
// -k, E[N] = k/(2p-1) * (1 - r^k)/(1 + r^k). It is computed in the
// equivalent form k * tanh(k*x/2) / tanh(x/2) with x = ln(p/(1-p)), exact
// at and near p = 1/2 (where E[N] = k²), and equal to k at p = 1 and 1 for
// k = 1. The race ends at one barrier or the other, so the value holds for
// any p in [0, 1]. With wrong votes spread over several answers a race can
// take more votes than this (rivals.ExpectedSamples). Divide by the
// valid-format rate for samples drawn. NaN outside the domain (see above).
func ExpectedSamples(p float64, k int) float64 {
	if !unit(p) || k < 1 {
		return math.NaN()
	}
	kf := float64(k)
	x := math.Log(p) - math.Log1p(-p)
	switch {
	case x == 0:
		return kf * kf
	case math.IsInf(x, 0):
		return kf
	}
	return kf * math.Tanh(kf*x/2) / math.Tanh(x/2)
}

// KMin is the smallest margin k with PFull(steps, k, p) >= target: about
// ln(target^(-1/steps) - 1) / ln r, which grows as ln(steps). It computes
// target^(-1/steps) - 1 as expm1(-ln(target)/steps), accurate for a
// million steps and a target within 1e-15 of 1, then corrects the rounding
// of the ceiling against PFull itself, so that the result is exactly the
// smallest k that PFull accepts. KMin is 1 when p = 1 or when one vote
// already meets the target.
//
// Errors wrap ErrOutOfRange: steps < 1, target outside (0, 1), p outside
// (1/2, 1] (at p <= 1/2 no margin helps), or a k_min above 10⁹ (p within
// about 1e-8 of 1/2).
func KMin(steps int, p, target float64) (int, error) {
	switch {
	case steps < 1:
		return 0, fmt.Errorf("vote: KMin: steps %d, want at least 1: %w", steps, ErrOutOfRange)
	case !(target > 0 && target < 1):
		return 0, fmt.Errorf("vote: KMin: target %v, want 0 < target < 1: %w", target, ErrOutOfRange)
	case !(p > 0.5 && p <= 1):
		return 0, fmt.Errorf("vote: KMin: p %v, want 1/2 < p <= 1 (no margin helps at p <= 1/2): %w", p, ErrOutOfRange)
	case p == 1:
		return 1, nil
	}
	lnr := math.Log1p(-p) - math.Log(p) // ln r < 0
	a := math.Expm1(-math.Log(target) / float64(steps))
	kf := math.Log(a) / lnr
	if !(kf <= maxKMin) { // also NaN, +Inf (a underflowed to 0)
		return 0, fmt.Errorf("vote: KMin: k_min above %d for steps %d, p %v, target %v: %w",
			maxKMin, steps, p, target, ErrOutOfRange)
	}
	k := max(1, int(math.Ceil(kf)))
	// The ceiling is right but for kf's rounding error, which can cross
	// an integer: settle it against PFull (a step at ordinary k; near
	// 10⁹ the error is several units, and so are the steps).
	for k > 1 && PFull(steps, k-1, p) >= target {
		k--
	}
	for PFull(steps, k, p) < target {
		k++
	}
	return k, nil
}

// ExpectedCost is the expected price of one step: ExpectedSamples(p, k)
// valid votes, divided by validRate (the share of samples that are not red
// flagged) for the samples drawn, times pricePerSample. It holds for one
// rival answer (not a bound: with wrong votes spread over several answers
// a race can cost more, see rivals.ExpectedSamples) and ignores failed draws.
//
// Errors wrap ErrOutOfRange: p outside [0, 1], k < 1, validRate outside
// (0, 1], or pricePerSample negative, infinite or NaN.
func ExpectedCost(p float64, k int, validRate, pricePerSample float64) (float64, error) {
	switch {
	case !unit(p):
		return 0, fmt.Errorf("vote: ExpectedCost: p %v, want 0 <= p <= 1: %w", p, ErrOutOfRange)
	case k < 1:
		return 0, fmt.Errorf("vote: ExpectedCost: k %d, want at least 1: %w", k, ErrOutOfRange)
	case !(validRate > 0 && validRate <= 1):
		return 0, fmt.Errorf("vote: ExpectedCost: valid rate %v, want 0 < rate <= 1: %w", validRate, ErrOutOfRange)
	case !(pricePerSample >= 0 && pricePerSample <= math.MaxFloat64):
		return 0, fmt.Errorf("vote: ExpectedCost: price %v, want a finite price >= 0: %w", pricePerSample, ErrOutOfRange)
	}
	return ExpectedSamples(p, k) / validRate * pricePerSample, nil
}

// unit reports whether p is a probability (NaN is not).
func unit(p float64) bool { return p >= 0 && p <= 1 }
