package calibrate_test

import (
	"context"
	"math"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binomialLowerBound returns the smallest b with P(X < b) > alpha for X
// ~ Binomial(n, p), less one: a count of successes below it has
// probability at most alpha.
func binomialLowerBound(n int, p, alpha float64) int {
	cdf := 0.0
	for x := 0; x <= n; x++ {
		lc := lgamma(n+1) - lgamma(x+1) - lgamma(n-x+1)
		cdf += math.Exp(lc + float64(x)*math.Log(p) + float64(n-x)*math.Log1p(-p))
		if cdf > alpha {
			return x
		}
	}
	return n
}

func lgamma(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

// TestIntervalCoverage calibrates the simulated model at p = 0.99 with 100
// seeds, 20 steps × 15 samples each, and counts the 95% intervals that
// hold 0.99. Clopper-Pearson covers with probability at least 0.95 (the
// design effect only widens it), so the count is at least Binomial(100,
// 0.95): below 87 with probability under 0.1%.
func TestIntervalCoverage(t *testing.T) {
	const seeds, p, conf = 100, 0.99, 0.95
	bound := binomialLowerBound(seeds, conf, 1e-3)
	require.Equal(t, 87, bound, "P(Binomial(100, 0.95) <= 86) = 0.00046")
	covered, low, high := 0, 0, 0
	for seed := range uint64(seeds) {
		model := numberSim(t, sim.Config{P: p, Seed: seed + 1, WrongAnswers: 8, FlagRate: 0.01})
		rep, err := calibrate.Run(context.Background(), calibrate.Config{
			Steps: numbers{1 << 20}, Solver: &maker.Solver{Model: model}, StepsSampled: 20, Samples: 15, Seed: seed + 1, Confidence: conf,
			NoPlan: true, // the interval alone
		})
		require.NoError(t, err)
		switch e := rep.All; {
		case e.Low > p:
			high++
		case e.High < p:
			low++
		default:
			covered++
		}
	}
	t.Logf("the 95%% interval held p = %v for %d of %d seeds (%d above it, %d below)", p, covered, seeds, high, low)
	assert.GreaterOrEqual(t, covered, bound)
}
