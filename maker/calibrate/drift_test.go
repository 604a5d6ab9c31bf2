package calibrate_test

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdaptiveKFollowsDrift: the model gets worse half way through the
// run (p 0.99, then 0.9 from step 512 of 10-disk Hanoi, every error the
// same wrong answer). A fixed k planned at the early p (k_min = 3) fails
// far more often than the 5% the target allows (an exact binomial test
// rejects it at 1%), while --k auto's change-point test sees the drop,
// its estimate restarts from there, and it stays within the target (the
// same test does not reject it; maker's TestAdaptiveKMonteCarloGuarantee
// bounds the failed share from above).
// Under -race or -short: 40 seeds, else 60; MDAP_STAT_SEEDS sets them.
func TestAdaptiveKFollowsDrift(t *testing.T) {
	n := 60
	if raceEnabled || testing.Short() {
		n = 40
	}
	seeds := seedsFromEnv(t, n)
	cfg := sim.DefaultConfig()
	cfg.P, cfg.WrongAnswers = 0.99, 1
	cfg.Drift = []sim.PChange{{Step: 512, P: 0.9}}
	k0, err := vote.KMin(1023, 0.99, 0.95)
	require.NoError(t, err)
	require.Equal(t, 3, k0)
	rows, err := calibrate.CompareHanoi(context.Background(), calibrate.Comparison{
		Disks: 10, Sim: cfg, Seeds: seeds, Fixed: []int{k0}, Auto: []maker.AdaptiveK{{Target: 0.95}},
	})
	require.NoError(t, err)
	failed := map[string]int{}
	for _, r := range rows {
		if r.WrongSteps > 0 || !r.Solved {
			failed[r.Policy]++
		}
	}
	sums := calibrate.Summarize(rows)
	require.Len(t, sums, 2)
	fixed, auto := sums[0], sums[1]
	t.Logf("fixed k=3: %.2f samples per step, %d of %d runs wrong; auto: %.2f samples per step, %d of %d runs wrong",
		fixed.SamplesPerStep, failed[fixed.Policy], fixed.Runs, auto.SamplesPerStep, failed[auto.Policy], auto.Runs)
	pFixed := binomUpper(fixed.Runs, failed[fixed.Policy], 0.05)
	assert.Less(t, pFixed, 0.01, "fixed k at the early p: %d of %d runs wrong, more than 5%% allows", failed[fixed.Policy], fixed.Runs)
	wholeRunTest(t, "k auto under drift", failed[auto.Policy], auto.Runs, 0.95)
	for _, r := range rows {
		if r.P != nil {
			assert.Positive(t, r.P.Changes, "seed %d: the change-point test saw the drop", r.Seed)
			assert.Less(t, r.P.P, 0.95, "seed %d: the estimate is of the late, worse p", r.Seed)
		}
	}
}
