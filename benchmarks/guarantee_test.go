package benchmarks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/internal/evidence"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuaranteeRowBounds: a row's bound and verdict are the one-sided 95%
// Clopper-Pearson figures of its counts: known values (exact rational
// sums; R's binom.test one-sided). internal/stats's tests check the
// bounds against gonum's binomial distribution function over a grid.
func TestGuaranteeRowBounds(t *testing.T) {
	for _, c := range []struct {
		failures, runs int
		upper          float64
		verdict        evidence.Verdict
	}{
		{0, 200, 0.014867, evidence.Met},
		{4, 200, 0.045180, evidence.Met},
		{5, 200, 0.051843, evidence.NotShown},
		{1, 100, 0.046560, evidence.Met},
		{10, 100, 0.163718, evidence.Violated},
		{0, 58, 0.050339, evidence.NotShown},
		{0, 4, 0.527129, evidence.NotShown},
		{43, 100, 0.517176, evidence.Violated},
	} {
		r := newGuaranteeRow("c", "p", c.runs, tally{runs: c.runs, failures: c.failures}, 0.05)
		assert.InDelta(t, c.upper, r.Upper, 2e-6, "%d of %d", c.failures, c.runs)
		assert.Equal(t, c.verdict, r.Verdict, "%d of %d", c.failures, c.runs)
	}
}

// TestGuaranteeSuiteSmall: the suite at its small size (here 2 seeds, at
// most 7 disks) has both rows of every cell, each row's figures are those
// of its counts, calibrate's rows account for every seed, and the table
// shows each bound beside the target. `maker bench --quick` in CI runs
// the suite at its quick size, 4 seeds; a full run 200, the evidence.
func TestGuaranteeSuiteSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("whole runs and calibrations over 2 seeds per cell: several seconds")
	}
	t.Parallel()
	const seeds = 2
	g, err := runGuaranteeN(context.Background(), Options{Seed: 1}, func() {}, seeds, true)
	require.NoError(t, err)
	cells := guaranteeCells()
	require.Len(t, g.Cells, len(cells))
	for _, c := range g.Cells {
		t.Logf("cell %s: %s", c.Name, c.Wall)
	}
	require.Len(t, g.Rows, 2*len(cells))
	assert.Equal(t, 59, g.MinRuns)
	for i, c := range cells {
		fixed, auto := g.Rows[2*i], g.Rows[2*i+1]
		assert.Equal(t, c.name, fixed.Cell)
		assert.Equal(t, c.name, auto.Cell)
		assert.Equal(t, "--k auto", auto.Policy)
		assert.Equal(t, seeds, auto.Runs, c.name)
		for _, r := range []GuaranteeRow{fixed, auto} {
			assert.Equal(t, evidence.Upper(r.Failures, r.Runs, 0.95), r.Upper, "%s %s", r.Cell, r.Policy)
			assert.Equal(t, evidence.Judge(r.Failures, r.Runs, 0.05), r.Verdict)
			assert.NotEqual(t, evidence.Met, r.Verdict, "%d runs cannot show 5%%", seeds)
			assert.LessOrEqual(t, r.Failures, r.Runs)
		}
		if c.calibrate {
			assert.Equal(t, "calibrate's k", fixed.Policy)
			given := 0
			for _, n := range fixed.Ks {
				given += n
			}
			assert.Equal(t, fixed.Runs, given, "%s: a run per k given", c.name)
			assert.Equal(t, seeds, given+fixed.NoK, "%s: every seed calibrated", c.name)
		} else {
			assert.Contains(t, fixed.Policy, "(k_min at ")
			assert.Equal(t, seeds, fixed.Runs)
		}
	}
	var b strings.Builder
	writeGuarantee(&b, g)
	md := b.String()
	assert.Contains(t, md, "| cell | setup | disks | policy | runs | failures | 95% upper bound | target 1 − T | verdict |")
	r := g.Rows[1]
	assert.Contains(t, md, fmt.Sprintf("| steady p | `--p 0.8 --wrong-answers 1` | 7 | --k auto | %d | %d | %.4f | 0.05 | %s |", seeds, r.Failures, r.Upper, r.Verdict))
}

// TestGuaranteeGoal: the report's goal is met only when the bound of every
// row whose k is chosen for the user is (the k_min baselines do not
// count), and names the rows that are not met or not shown.
func TestGuaranteeGoal(t *testing.T) {
	g := &GuaranteeResult{Seeds: 200, Rows: []GuaranteeRow{
		newGuaranteeRow("steady p", "--k auto", 200, tally{runs: 200, failures: 4}, 0.05),
		newGuaranteeRow("drift early", "--k auto", 200, tally{runs: 200, failures: 6}, 0.05),
		newGuaranteeRow("drift late", "--k auto", 200, tally{runs: 200, failures: 85}, 0.05),
		newGuaranteeRow("drift late", "k=2 (k_min at the early p)", 200, tally{runs: 200, failures: 200}, 0.05),
	}}
	goal := guaranteeGoal(g)
	assert.Equal(t, "no", goal.Met)
	assert.Equal(t, "1 of 3 rows met (200 seeds per cell); not met: drift late / --k auto; not shown: drift early / --k auto", goal.Measured)
	g.Rows = g.Rows[:1]
	assert.Equal(t, "yes", guaranteeGoal(g).Met)
	assert.Equal(t, "no", guaranteeGoal(&GuaranteeResult{}).Met, "no rows: nothing shown")
}
