package calibrate_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/evidence"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// longSeeds is the seeds of an evidence test that the default suite
// cannot afford (or that fails, see #34): MDAP_STAT_SEEDS of them, or a
// skip naming what to set. At least evidence.MinRuns seeds (59 for a 5%
// target), else no outcome could show the promise.
func longSeeds(t *testing.T, limit float64) []uint64 {
	t.Helper()
	if os.Getenv("MDAP_STAT_SEEDS") == "" {
		t.Skip("evidence behind the long flag: MDAP_STAT_SEEDS=200 runs it (the default suite runs its smoke test)")
	}
	seeds := seedsFromEnv(t, 0)
	if need := evidence.MinRuns(limit, evidence.Confidence); len(seeds) < need {
		t.Fatalf("MDAP_STAT_SEEDS=%d: a failure rate of %g needs at least %d seeds to be shown at all", len(seeds), limit, need)
	}
	return seeds
}

// autoAtP08 runs --k auto at p = 0.8 with one rival answer (every error
// the same wrong answer), target 0.95, on Hanoi of the given disks over
// seeds, checks each run's ledger, and returns the runs that failed.
func autoAtP08(t *testing.T, disks int, seeds []uint64) (failed int) {
	cfg := sim.DefaultConfig()
	cfg.P, cfg.WrongAnswers = 0.8, 1
	start := time.Now()
	rows, err := calibrate.CompareHanoi(context.Background(), calibrate.Comparison{
		Disks: disks, Sim: cfg, Seeds: seeds, Auto: []adaptive.Policy{{Target: 0.95}},
	})
	require.NoError(t, err)
	over := 0
	spent := 0.0
	for _, r := range rows {
		if r.WrongSteps > 0 || !r.Solved {
			failed++
		}
		require.NotNil(t, r.P)
		assert.Equal(t, adaptive.SourceCorrectness, r.P.Source)
		assert.LessOrEqual(t, r.P.Spent, 0.05+1e-12, "seed %d: the ledger within the budget", r.Seed)
		over += r.P.OverBudget
		spent += r.P.Spent
	}
	sum := calibrate.Summarize(rows)[0]
	t.Logf("%d disks, %d seeds in %s: %.2f samples per step, mean failure charged %.4f, %d steps over budget, %d runs failed",
		disks, len(seeds), time.Since(start).Round(time.Millisecond), sum.SamplesPerStep, spent/float64(len(rows)), over, failed)
	return failed
}

// TestAdaptiveKMonteCarlo: --k auto at p = 0.8 with one rival answer,
// 10-disk Hanoi (1,023 steps), target 0.95: over 100 seeds
// (MDAP_STAT_SEEDS=N: N) the one-sided 95% upper bound on the share of
// runs with a wrong step is at most 5% (at most 1 failure of 100;
// internal/evidence). Measured: 0 of 100, 1 of 200 (bound 0.0235). The
// old rule (k_min for the remaining steps at the full target, each step)
// had 10 of 60 runs wrong. Under -race or -short it is skipped: the
// default suite cannot afford 10-disk runs there, and at 7 disks 100 seeds
// are not informative (the rate is about 1.4%, 14 of 1,000 seeds, so 100
// seeds show it only with at most one failure, which seeds 1-100 do not:
// 3); TestAdaptiveKMonteCarloSmoke runs instead, and the guarantee suite's
// "steady p" cell is the same experiment over 200 seeds.
func TestAdaptiveKMonteCarlo(t *testing.T) {
	t.Parallel()
	if os.Getenv("MDAP_STAT_SEEDS") == "" && (raceEnabled || testing.Short()) {
		t.Skip("evidence at 10 disks: not under -race or -short (TestAdaptiveKMonteCarloSmoke runs; MDAP_STAT_SEEDS=N runs this)")
	}
	seeds := seedsFromEnv(t, 100)
	failed := autoAtP08(t, 10, seeds)
	evidence.AtMost(t, "k auto at p 0.8, one rival, 10 disks", failed, len(seeds), 1-0.95)
}

// TestAdaptiveKMonteCarloSmoke is a smoke test, not evidence: --k auto at
// p = 0.8 with one rival on 7-disk Hanoi over 100 seeds keeps every run's
// ledger within its budget and is not shown to fail its target (the
// one-sided 95% lower bound on its failure rate is not above 5%). Race-built
// over 25 seeds: the seeds add statistics, not concurrency (CI's evidence
// stage runs the 100, not race-built: .ci/run). The evidence is
// TestAdaptiveKMonteCarlo.
func TestAdaptiveKMonteCarloSmoke(t *testing.T) {
	t.Parallel()
	n := 100
	if raceEnabled {
		n = 25
	}
	seeds := seedsFromEnv(t, n)
	failed := autoAtP08(t, 7, seeds)
	assert.LessOrEqual(t, evidence.Lower(failed, len(seeds), evidence.Confidence), 0.05, "%d of %d runs failed: shown above 5%%", failed, len(seeds))
}
