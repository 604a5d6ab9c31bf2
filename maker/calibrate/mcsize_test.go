package calibrate_test

import (
	"os"
	"testing"
)

// montecarloSize is the size of TestRecommendedKMeetsTarget: 10 disks
// over 100 seeds; under -race or -short 7 disks (127 steps) over 100
// seeds, a real but quicker version; MDAP_STAT_SEEDS=N runs 10 disks over
// N seeds whatever the mode.
func montecarloSize(t *testing.T) (disks int, seeds []uint64) {
	if os.Getenv("MDAP_STAT_SEEDS") == "" && (raceEnabled || testing.Short()) {
		return 7, seedsFromEnv(t, 100)
	}
	return 10, seedsFromEnv(t, 100)
}
