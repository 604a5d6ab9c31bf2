package benchmarks

import (
	"strings"
	"testing"

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
