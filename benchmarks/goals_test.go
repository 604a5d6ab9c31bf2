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

// TestHTTPGoalsReadTheGoReference: the HTTP goals are judged on the rows
// against the Go reference loop, never on the same variants' rows against
// the paper's loop in Python (which come later in the table); those give
// informational goals, met "info" whatever their ratio.
func TestHTTPGoalsReadTheGoReference(t *testing.T) {
	s := &SpeedResult{Python: "3.11.7", Rows: []SpeedRow{
		{Variant: referenceRow},
		{Variant: httpOneRow, Baseline: referenceRow, Runs: 5, Ratio: 0.8, RatioLo: 0.7, RatioHi: 0.9},
		{Variant: httpWavesRow, Baseline: referenceRow, Runs: 5, Ratio: 0.38, RatioLo: 0.35, RatioHi: 0.55},
		{Variant: pythonRow},
		{Variant: httpOneRow, Baseline: pythonRow, Runs: 5, Ratio: 0.33, RatioLo: 0.3, RatioHi: 0.36},
		{Variant: httpWavesRow, Baseline: pythonRow, Runs: 5, Ratio: 0.61, RatioLo: 0.5, RatioHi: 0.7},
	}}
	want := map[string][2]string{
		"HTTP: CPU per sample at most 0.4× the paper's loop (--parallel 1)":                {"no", "×0.80 (0.70–0.90 over 5 alternating runs)"},
		"HTTP: CPU per sample at most 0.4× the paper's loop (waves + samples per request)": {"yes", "×0.38 (0.35–0.55 over 5 alternating runs)"},
		pythonGoalPrefix + "--parallel 1":                                                  {"info", "×0.33 (0.30–0.36 over 5 alternating runs)"},
		pythonGoalPrefix + "waves + samples per request":                                   {"info", "×0.61 (0.50–0.70 over 5 alternating runs)"},
	}
	seen := 0
	for _, g := range overheadGoals(s) {
		if w, ok := want[g.Goal]; ok {
			seen++
			assert.Equal(t, w[0], g.Met, g.Goal)
			assert.Equal(t, w[1], g.Measured, g.Goal)
		}
	}
	assert.Equal(t, len(want), seen)
	md := (&Report{Goals: overheadGoals(s)}).Markdown()
	assert.Contains(t, md, "| "+pythonGoalPrefix+"--parallel 1 | ×0.33 (0.30–0.36 over 5 alternating runs) (informational, no target: the goal above is judged against the Go reference loop) | info |")
}
