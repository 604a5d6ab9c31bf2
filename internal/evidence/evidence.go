// Package evidence is mdap's standard of proof for a statistical promise
// ("a run succeeds with probability at least T"): the one-sided 95% upper
// confidence bound on the failure rate, exact (Clopper-Pearson), at or
// below the target 1 - T. A binomial test that fails to reject is not
// evidence: with 100 runs it accepts 10 failures against a 5% target,
// while the bound needs at most 1.
//
// It sits at the bottom of the package table so that any package's tests
// and the benchmarks' guarantee suite use the one rule. The bounds are
// internal/stats's (UpperBound, LowerBound: gonum's inverse of the
// regularized incomplete beta function); the guarantee suite's test
// checks them against gonum's binomial distribution function.
package evidence

import (
	"fmt"
	"math"

	"github.com/mdap-go/mdap/internal/stats"
)

// Confidence is the one-sided confidence of every bound the project's
// statistical tests and the guarantee suite report.
const Confidence = 0.95

// Upper is the one-sided upper confidence bound, at confidence c in
// (0, 1), on a rate seen failures times in runs: the exact
// (Clopper-Pearson) bound, the p at which P(Binomial(runs, p) <= failures)
// = 1 - c (stats.UpperBound). For whole counts its coverage is at least
// c whatever the true rate. It is 1 when failures >= runs (or runs <= 0),
// and 1 - (1-c)^(1/runs) with no failure. Cost: one inversion of the
// regularized incomplete beta function.
func Upper(failures, runs int, c float64) float64 {
	return stats.UpperBound(float64(failures), float64(runs), c)
}

// Lower is the one-sided lower confidence bound, at confidence c, on a
// rate seen failures times in runs: the p at which P(Binomial(runs, p) >=
// failures) = 1 - c (stats.LowerBound); 0 without a failure. Lower above
// a target is evidence that the rate exceeds it. Cost: as Upper.
func Lower(failures, runs int, c float64) float64 {
	return stats.LowerBound(float64(failures), float64(runs), c)
}

// MinRuns is the fewest runs whose bound at confidence c can be at or
// below limit at all, that is with no failure: ln(1-c) / ln(1-limit),
// rounded up (59 for a 5% limit at 95%). Fewer runs cannot show the
// promise whatever they do. limit must be in (0, 1).
func MinRuns(limit, c float64) int {
	n := int(math.Ceil(math.Log1p(-c) / math.Log1p(-limit)))
	for n > 1 && Upper(0, n-1, c) <= limit {
		n-- // guard the rounding of the logarithms
	}
	for Upper(0, n, c) > limit {
		n++
	}
	return n
}

// Verdict is what runs show about a failure rate against its limit.
type Verdict string

// The verdicts.
const (
	// Met: the upper bound is at or below the limit (the promise shown).
	Met Verdict = "met"
	// Violated: the lower bound is above the limit (the promise broken).
	Violated Verdict = "not met"
	// NotShown: neither; more runs would tell.
	NotShown Verdict = "not shown"
)

// Judge is the verdict of failures in runs against limit (= 1 - T), at
// Confidence on each side.
func Judge(failures, runs int, limit float64) Verdict {
	switch {
	case Upper(failures, runs, Confidence) <= limit:
		return Met
	case Lower(failures, runs, Confidence) > limit:
		return Violated
	}
	return NotShown
}

// T is what the assertions need of a *testing.T (without importing
// testing into the packages that use Judge).
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// AtMost asserts that failures in runs show a failure rate at or below
// limit: the one-sided 95% upper bound is at or below it. It logs the
// figures either way, fails t otherwise naming the runs the promise needs
// at all (MinRuns), and returns whether it held.
func AtMost(t T, what string, failures, runs int, limit float64) bool {
	t.Helper()
	up := Upper(failures, runs, Confidence)
	msg := fmt.Sprintf("%s: %d of %d runs failed (%.3g); 95%% upper bound %.4f against %.4g", what, failures, runs, rate(failures, runs), up, limit)
	if up <= limit {
		t.Logf("%s: met", msg)
		return true
	}
	if need := MinRuns(limit, Confidence); runs < need {
		t.Errorf("%s: not shown (fewer runs than the %d that a rate of %.4g needs even without a failure)", msg, need, limit)
		return false
	}
	t.Errorf("%s: not shown: the promise does not hold at this evidence", msg)
	return false
}

// Above asserts that failures in runs show a failure rate above limit:
// the one-sided 95% lower bound is above it (evidence that a policy fails
// its target). It logs the figures and returns whether it held.
func Above(t T, what string, failures, runs int, limit float64) bool {
	t.Helper()
	lo := Lower(failures, runs, Confidence)
	msg := fmt.Sprintf("%s: %d of %d runs failed (%.3g); 95%% lower bound %.4f against %.4g", what, failures, runs, rate(failures, runs), lo, limit)
	if lo > limit {
		t.Logf("%s: above", msg)
		return true
	}
	t.Errorf("%s: not shown to be above", msg)
	return false
}

func rate(failures, runs int) float64 {
	if runs <= 0 {
		return math.NaN()
	}
	return float64(failures) / float64(runs)
}
