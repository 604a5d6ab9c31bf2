package calibrate_test

import (
	"context"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binomUpper is P(X >= x) for X ~ Binomial(n, p), exactly (a sum of
// terms in log space).
func binomUpper(n, x int, p float64) float64 {
	if x <= 0 {
		return 1
	}
	s := 0.0
	for i := x; i <= n; i++ {
		lg := lchoose(n, i) + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p)
		s += math.Exp(lg)
	}
	return math.Min(1, s)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

func TestBinomUpper(t *testing.T) {
	assert.InDelta(t, 1-math.Pow(0.95, 100), binomUpper(100, 1, 0.05), 1e-12)
	assert.InDelta(t, 0.5, binomUpper(1, 1, 0.5), 1e-12)
	// P(Bin(100, 0.05) >= 11) = 0.01147 (R: 1 - pbinom(10, 100, 0.05)).
	assert.InDelta(t, 0.01147, binomUpper(100, 11, 0.05), 5e-5)
}

// seedsFromEnv is n seeds 1..n, or MDAP_STAT_SEEDS of them when set (the
// long version of a statistical test).
func seedsFromEnv(t *testing.T, n int) []uint64 {
	if v := os.Getenv("MDAP_STAT_SEEDS"); v != "" {
		m, err := strconv.Atoi(v)
		require.NoError(t, err, "MDAP_STAT_SEEDS")
		n = m
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

// wholeRunTest asserts that failures of runs is consistent with a
// whole-run failure rate of at most 1 - target: the exact binomial test
// at the 1% level (rejects when P(X >= failures) < 0.01 at rate 1 -
// target).
func wholeRunTest(t *testing.T, what string, failures, runs int, target float64) {
	t.Helper()
	pv := binomUpper(runs, failures, 1-target)
	t.Logf("%s: %d of %d runs had a wrong step (%.1f%%); exact binomial p-value against %.2f: %.4g", what, failures, runs, 100*float64(failures)/float64(runs), 1-target, pv)
	assert.GreaterOrEqual(t, pv, 0.01, "%s: %d of %d runs failed: more than a failure rate of %.2f allows", what, failures, runs, 1-target)
}

// TestAdaptiveKMonteCarlo: --k auto at p = 0.8 with one rival answer
// (every error the same wrong answer), 10-disk Hanoi (1,023 steps),
// target 0.95: over many seeds the share of runs with a wrong step is
// consistent with at most 5% (the exact binomial test at the 1% level).
// The old rule (k_min for the remaining steps at the full target, each
// step) had 10 of 60 runs wrong (p-value 0.011 at 60, far below at 100).
// The default suite runs 100 seeds of 8 disks under -race... see
// montecarloSize; MDAP_STAT_SEEDS=N sets the seeds of the 10-disk run.
func TestAdaptiveKMonteCarlo(t *testing.T) {
	disks, seeds := montecarloSize(t)
	cfg := sim.DefaultConfig()
	cfg.P, cfg.WrongAnswers = 0.8, 1
	start := time.Now()
	rows, err := calibrate.CompareHanoi(context.Background(), calibrate.Comparison{
		Disks: disks, Sim: cfg, Seeds: seeds, Auto: []maker.AdaptiveK{{Target: 0.95}},
	})
	require.NoError(t, err)
	failed, over := 0, 0
	spent := 0.0
	for _, r := range rows {
		if r.WrongSteps > 0 || !r.Solved {
			failed++
		}
		require.NotNil(t, r.P)
		assert.Equal(t, maker.SourceCorrectness, r.P.Source)
		assert.LessOrEqual(t, r.P.Spent, 0.05+1e-12, "seed %d: the ledger within the budget", r.Seed)
		over += r.P.OverBudget
		spent += r.P.Spent
	}
	sum := calibrate.Summarize(rows)[0]
	t.Logf("%d disks, %d seeds in %s: %.2f samples per step, mean failure charged %.4f, %d steps over budget",
		disks, len(seeds), time.Since(start).Round(time.Millisecond), sum.SamplesPerStep, spent/float64(len(rows)), over)
	wholeRunTest(t, "k auto at p 0.8, one rival", failed, len(rows), 0.95)
}
