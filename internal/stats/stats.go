// Package stats is mdap's one home for statistics: the exact
// (Clopper-Pearson) bounds on a proportion, and the beta-binomial model
// of steps that differ in difficulty (each step's p drawn from a Beta of
// mean mu and intra-class correlation rho), its likelihood and its fit
// of the mean. The special functions are gonum's (mathext's regularized
// incomplete beta and its inverse); nothing here draws random numbers or
// keeps state.
//
// It sits at the bottom of the package table so that the core (maker's
// adaptive k and its change-point test), maker/calibrate and the
// standard of proof (internal/evidence) use the one implementation.
package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// ClopperPearson is the exact two-sided interval, at confidence c in
// (0, 1), of a proportion with x successes of n trials:
//
//	lower = the α/2 quantile of Beta(x, n-x+1)   (0 when x = 0)
//	upper = the 1-α/2 quantile of Beta(x+1, n-x) (1 when x = n)
//
// with α = 1-c: LowerBound and UpperBound at confidence 1-α/2 each. It
// inverts the binomial tests, so for whole x and n its coverage is at
// least c for every p (conservative, unlike Wilson's or the normal
// interval). x and n may be fractional (effective counts); x is clamped
// to [0, n]. Without trials it is [0, 1]. Cost: two inversions of the
// regularized incomplete beta function (gonum's mathext.InvRegIncBeta).
func ClopperPearson(x, n, c float64) (lower, upper float64) {
	alpha := 1 - c
	return LowerBound(x, n, 1-alpha/2), UpperBound(x, n, 1-alpha/2)
}

// BinomialTail is P(X >= x) for X ~ Binomial(n, p): 1 for x <= 0, 0 for
// x > n, else the regularized incomplete beta I_p(x, n-x+1), exact to
// floating point however small. Cost: one mathext.RegIncBeta.
func BinomialTail(x, n int, p float64) float64 {
	switch {
	case x <= 0:
		return 1
	case x > n:
		return 0
	}
	return mathext.RegIncBeta(float64(x), float64(n-x+1), p)
}

// UpperBound is the one-sided exact upper confidence bound, at confidence
// c in (0, 1), on a proportion with x successes of n trials: the c
// quantile of Beta(x+1, n-x), which for whole counts is the p at which
// P(Binomial(n, p) <= x) = 1 - c. It is 1 when x >= n or without trials
// (n <= 0). Cost: one mathext.InvRegIncBeta.
func UpperBound(x, n, c float64) float64 {
	x = math.Max(0, x)
	if x >= n {
		return 1
	}
	return mathext.InvRegIncBeta(x+1, n-x, c)
}

// LowerBound is the one-sided exact lower confidence bound, at confidence
// c in (0, 1), on a proportion with x successes of n trials: the 1 - c
// quantile of Beta(x, n-x+1), which for whole counts is the p at which
// P(Binomial(n, p) >= x) = 1 - c. It is 0 when x <= 0 or without trials.
// Cost: one mathext.InvRegIncBeta.
func LowerBound(x, n, c float64) float64 {
	x = math.Min(n, x)
	if x <= 0 {
		return 0
	}
	return mathext.InvRegIncBeta(x, n-x+1, 1-c)
}

// NormalQuantile is the c quantile of the standard normal distribution
// (gonum's mathext.NormalQuantile): 1.96 at 0.975. c must be in [0, 1].
func NormalQuantile(c float64) float64 { return mathext.NormalQuantile(c) }

// Wilson is the Wilson score interval at normal quantile z of an observed
// share p of n trials (n may be fractional: effective counts):
//
//	(p + z²/2n ∓ z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
//
// clamped to [0, 1], with lower 0 when p is 0 and upper 1 when p is 1.
// It is [0, 1] without trials (n <= 0). Cost: O(1).
func Wilson(p, n, z float64) (lower, upper float64) {
	if !(n > 0) {
		return 0, 1
	}
	p = math.Max(0, math.Min(1, p))
	z2 := z * z
	half := z * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	lower = math.Max(0, math.Min(1, (p+z2/(2*n)-half)/(1+z2/n)))
	upper = math.Max(0, math.Min(1, (p+z2/(2*n)+half)/(1+z2/n)))
	if p == 0 {
		lower = 0
	}
	if p == 1 {
		upper = 1
	}
	return lower, upper
}

// WilsonLower is the one-sided Wilson lower bound, at confidence c in
// [0.5, 1), of an observed share p of n trials: Wilson's lower end at z
// the normal quantile of c. It is 0 without trials or successes, in
// [0, 1] always, and n/(n + z²) when p is 1. Cost: O(1).
func WilsonLower(p, n, c float64) float64 {
	lo, _ := Wilson(p, n, NormalQuantile(c))
	return lo
}
