package calibrate_test

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/internal/evidence"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// driftRuns runs the drift experiment: the model gets worse half way
// through the run (p 0.99, then 0.9 from step 512 of 10-disk Hanoi, every
// error the same wrong answer), with a fixed k planned at the early p
// (k_min = 3) and with --k auto, on the same seeds. It returns the failed
// runs of each, and checks on every run that auto's change-point test
// saw the drop and its estimate (restarted there) reads the late, worse p.
func driftRuns(t *testing.T, seeds []uint64) (fixedFailed, autoFailed int) {
	cfg := sim.DefaultConfig()
	cfg.P, cfg.WrongAnswers = 0.99, 1
	cfg.Drift = []sim.PChange{{Step: 512, P: 0.9}}
	k0, err := laws.KMin(1023, 0.99, 0.95)
	require.NoError(t, err)
	require.Equal(t, 3, k0)
	rows, err := calibrate.CompareHanoi(context.Background(), calibrate.Comparison{
		Disks: 10, Sim: cfg, Seeds: seeds, Fixed: []int{k0}, Auto: []adaptive.Policy{{Target: 0.95}},
	})
	require.NoError(t, err)
	failed := map[string]int{}
	for _, r := range rows {
		if r.WrongSteps > 0 || !r.Solved {
			failed[r.Policy]++
		}
		if r.P != nil {
			assert.Positive(t, r.P.Changes, "seed %d: the change-point test saw the drop", r.Seed)
			assert.Less(t, r.P.P, 0.95, "seed %d: the estimate is of the late, worse p", r.Seed)
		}
	}
	sums := calibrate.Summarize(rows)
	require.Len(t, sums, 2)
	fixed, auto := sums[0], sums[1]
	t.Logf("fixed k=3: %.2f samples per step, %d of %d runs wrong; auto: %.2f samples per step, %d of %d runs wrong",
		fixed.SamplesPerStep, failed[fixed.Policy], fixed.Runs, auto.SamplesPerStep, failed[auto.Policy], auto.Runs)
	// The fixed k fails its target: the one-sided 95% lower bound on its
	// failure rate is above 5% (evidence of a violation, at any size here).
	evidence.Above(t, "fixed k at the early p under drift", failed[fixed.Policy], fixed.Runs, 0.05)
	return failed[fixed.Policy], failed[auto.Policy]
}

// TestAdaptiveKFollowsDriftSmoke is a smoke test, not evidence: on 60
// seeds (20 under -short: 12 of them fail the fixed k, a 95% lower bound
// of 0.39 against 0.05; 8 race-built, where the seeds add statistics, not
// concurrency: CI's evidence stage runs the 60, not race-built, .ci/run)
// the fixed k at the early p is shown to fail its target, and --k auto,
// whose change-point test sees the drop, fails fewer runs. 60 runs cannot show auto's own promise (1 failure of 60 bounds
// the rate at 0.077, above 5%); TestAdaptiveKFollowsDrift and the
// guarantee suite (maker bench --suite guarantee, cells "drift early" and
// "drift late") are the evidence.
func TestAdaptiveKFollowsDriftSmoke(t *testing.T) {
	t.Parallel()
	n := 60
	switch {
	case raceEnabled:
		n = 8
	case testing.Short():
		n = 20
	}
	fixed, auto := driftRuns(t, seedsFromEnv(t, n))
	assert.Less(t, auto, fixed)
}

// TestAdaptiveKFollowsDrift is the evidence of the drift promise: --k
// auto under the same drift keeps the one-sided 95% upper bound on its
// failure rate at or below 1 - T = 5%, over MDAP_STAT_SEEDS seeds (200:
// at most 4 failures). Behind the long flag: the default suite cannot
// afford the seeds (see the smoke test above). With the recent window it
// failed (7 of 200 runs wrong, a bound of 0.0647, #34); with the
// change-point test, MDAP_STAT_SEEDS=200: 0 of 200, a bound of 0.0149
// (the fixed k: 97 of 200).
func TestAdaptiveKFollowsDrift(t *testing.T) {
	t.Parallel()
	seeds := longSeeds(t, 0.05)
	_, auto := driftRuns(t, seeds)
	evidence.AtMost(t, "k auto under drift", auto, len(seeds), 0.05)
}
