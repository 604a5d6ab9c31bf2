package benchmarks

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMergeKeepsOtherSuites: a report of one suite merged into an older
// report keeps the older's other suites, their walls and the run that
// measured them (named in the header, not counted in this run's walls),
// replaces the suite it ran, and its goals read the kept suite's own
// figures, not this run's machine line.
func TestMergeKeepsOtherSuites(t *testing.T) {
	then := time.Date(2026, 12, 2, 13, 54, 0, 0, time.UTC)
	older := &Report{Command: "maker bench --out r", Started: then, SuiteWall: map[string]string{"scale": "43.9s", "guarantee": "11.3s"},
		Scale:     &ScaleResult{Rows: []ScaleRow{{Disks: 20, Wall: 15 * time.Second, Solved: true, Load: "1.43 1.82 3.47"}}},
		Guarantee: &GuaranteeResult{Seeds: 100}}
	newer := &Report{Command: "maker bench --suite guarantee --merge --out r", Started: then.Add(72 * time.Hour), Wall: time.Minute,
		SuiteWall: map[string]string{"guarantee": "1m0s"}, Guarantee: &GuaranteeResult{Seeds: 200, Target: 0.95, Limit: 0.05}}
	newer.Machine.LoadBefore = "28.91 27.90 20.08"
	newer.Merge(older)

	assert.Same(t, older.Scale, newer.Scale, "kept")
	assert.Equal(t, 200, newer.Guarantee.Seeds, "the suite run replaces the older one")
	require.Len(t, newer.Kept, 1)
	assert.Equal(t, []string{"scale"}, newer.Kept[0].Suites)
	assert.Equal(t, "maker bench --out r", newer.Kept[0].Command)
	assert.Equal(t, "43.9s", newer.SuiteWall["scale"])
	found := false
	for _, g := range newer.Goals {
		if strings.HasPrefix(g.Goal, "20-disk Hanoi (1,048,575 steps)") {
			found = true
			assert.Contains(t, g.Why, "1.43 1.82 3.47", "the kept run's load")
		}
	}
	assert.True(t, found)
	md := newer.Markdown()
	assert.Contains(t, md, "in 1m0s (guarantee 1m0s).")
	assert.Contains(t, md, "- kept from an earlier report (`--merge`): scale 43.9s, measured by `maker bench --out r` on 2026-12-02 13:54 UTC (full;")

	// Merged again: the kept suite keeps its first run.
	third := &Report{Command: "maker bench --suite guarantee --merge --out r", Started: then.Add(96 * time.Hour), SuiteWall: map[string]string{"guarantee": "2s"}, Guarantee: &GuaranteeResult{}}
	third.Merge(newer)
	require.Len(t, third.Kept, 1)
	assert.Equal(t, "maker bench --out r", third.Kept[0].Command)
	assert.Equal(t, then, third.Kept[0].Started)
}
