package calibrate_test

import (
	"os"
	"testing"
)

// montecarloSize is the size of TestRecommendedKMeetsTarget: 10 disks
// over 100 seeds, the evidence (CI runs it so, not race-built, in its
// computing lane: .ci/run); under -race or -short 7 disks (127 steps)
// over 20 seeds, a smoke test that no run fails (100 seeds there were
// minutes of the race-built default suite); MDAP_STAT_SEEDS=N runs 10
// disks over N seeds whatever the mode.
func montecarloSize(t *testing.T) (disks int, seeds []uint64) {
	if os.Getenv("MDAP_STAT_SEEDS") == "" && (raceEnabled || testing.Short()) {
		return 7, seedsFromEnv(t, 20)
	}
	return 10, seedsFromEnv(t, 100)
}
