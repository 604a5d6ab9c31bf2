package benchmarks

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestQuickGoalLabelsSayWhatWasCompared: a quick scale run stops at 14
// disks; the memory goal's label must not say "20 disks" while the row
// compares 14 and 12. (It did: the newcomer report.)
func TestQuickGoalLabelsSayWhatWasCompared(t *testing.T) {
	r := &Report{Scale: &ScaleResult{Rows: []ScaleRow{{Disks: 12, PeakRSSMB: 10}, {Disks: 14, PeakRSSMB: 11}}}}
	found := false
	for _, g := range goals(r) {
		if strings.HasPrefix(g.Goal, "memory at") {
			found = true
			assert.Contains(t, g.Goal, "14 disks", g.Goal)
			assert.NotContains(t, g.Goal, "memory at 20 disks", g.Goal)
			assert.Contains(t, g.Measured, "at 14 disks")
		}
	}
	assert.True(t, found, "the memory goal is reported")
}

// TestTwentyDisksGoal: issue #24's 20-disk goal is met under 25 s, missed
// at or over it, and says the load the run started under.
func TestTwentyDisksGoal(t *testing.T) {
	for _, c := range []struct {
		wall time.Duration
		met  string
	}{{12 * time.Second, "yes"}, {25 * time.Second, "no"}, {34 * time.Second, "no"}} {
		r := &Report{Scale: &ScaleResult{Rows: []ScaleRow{
			{Disks: 12, PeakRSSMB: 10, CPUPerSample: 4},
			{Disks: 20, PeakRSSMB: 10, CPUPerSample: 3.7, Wall: c.wall, Solved: true, Load: "0.13 0.04 0.01"},
		}}}
		found := false
		for _, g := range goals(r) {
			if strings.HasPrefix(g.Goal, "20-disk Hanoi on the sim under 25 s") {
				found = true
				assert.Equal(t, c.met, g.Met, "%s: %s", c.wall, g.Measured)
				assert.Contains(t, g.Measured, "load average 0.13 0.04 0.01")
			}
		}
		assert.True(t, found, "the 20-disk goal is reported")
	}
}
