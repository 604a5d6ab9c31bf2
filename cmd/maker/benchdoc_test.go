package main

import (
	"testing"

	"github.com/mdap-go/mdap/benchmarks"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchDocNamesEverySuite: docs/bench.md's flag table gives the values
// of --suite ("repeatable or comma-separated", all by default) and its
// list describes "The suites:". Both must name every suite maker bench
// runs (benchmarks.Suites), so a suite added to the code is added to the
// page.
func TestBenchDocNamesEverySuite(t *testing.T) {
	t.Parallel()
	doc := string(mustRead(t, "../../docs/bench.md"))
	row := docRow(t, doc, "| `--suite NAME` |")
	for _, name := range benchmarks.Suites {
		assert.Contains(t, row, "`"+name+"`", "the --suite row does not name %s", name)
		assert.Contains(t, doc, "\n- **"+name+"**", "the list of suites does not describe %s", name)
	}
}

// TestBenchBarErrExitsOne: maker bench fails (exit status 1, the report
// already written) when a figure of the goals suite is past its bar, and
// not when it only misses its goal.
func TestBenchBarErrExitsOne(t *testing.T) {
	t.Parallel()
	row := benchmarks.FeltGoal{Name: "wall per step", Unit: "×", Judge: benchmarks.AtMost, Target: 1.02, Bar: 1.10, Figure: 1.05, Met: false, Held: true}
	assert.NoError(t, barErr(&benchmarks.Report{Felt: &benchmarks.FeltResult{Rows: []benchmarks.FeltGoal{row}}}), "a miss within the bar")
	row.Figure, row.Held = 1.2, false
	err := barErr(&benchmarks.Report{Felt: &benchmarks.FeltResult{Rows: []benchmarks.FeltGoal{row}}})
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitFailed, ee.code)
	assert.ErrorIs(t, err, benchmarks.ErrBar)
	assert.Contains(t, err.Error(), "wall per step: ×1.200")
}
