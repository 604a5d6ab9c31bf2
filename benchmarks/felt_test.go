package benchmarks

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFeltBarFailsPastItsBar: a figure past its bar (either way, or not a
// number) makes BarErr an ErrBar naming it; a figure between its goal and
// its bar is a miss that does not fail; an info row never fails.
func TestFeltBarFailsPastItsBar(t *testing.T) {
	for _, c := range []struct {
		name      string
		g         FeltGoal
		met, held bool
	}{
		{"at most, met", FeltGoal{Judge: AtMost, Target: 1.02, Bar: 1.10, Figure: 1.01}, true, true},
		{"at most, on the goal", FeltGoal{Judge: AtMost, Target: 1.02, Bar: 1.10, Figure: 1.02}, true, true},
		{"at most, missed within the bar", FeltGoal{Judge: AtMost, Target: 1.02, Bar: 1.10, Figure: 1.05}, false, true},
		{"at most, on the bar", FeltGoal{Judge: AtMost, Target: 1.02, Bar: 1.10, Figure: 1.10}, false, true},
		{"at most, past the bar", FeltGoal{Judge: AtMost, Target: 1.02, Bar: 1.10, Figure: 1.11}, false, false},
		{"at least, met", FeltGoal{Judge: AtLeast, Target: 3.6, Bar: 2, Figure: 3.7}, true, true},
		{"at least, missed within the bar", FeltGoal{Judge: AtLeast, Target: 3.6, Bar: 2, Figure: 2.3}, false, true},
		{"at least, past the bar", FeltGoal{Judge: AtLeast, Target: 3.6, Bar: 2, Figure: 1.9}, false, false},
		{"not a number", FeltGoal{Judge: AtMost, Target: 1.02, Bar: 1.10, Figure: math.NaN()}, false, false},
		{"not a number, at least", FeltGoal{Judge: AtLeast, Target: 0.95, Bar: 0.9, Figure: math.NaN()}, false, false},
		{"info", FeltGoal{Judge: Info, Figure: 9}, true, true},
	} {
		g := c.g
		g.Name = c.name
		g.judge()
		assert.Equal(t, c.met, g.Met, "%s: met", c.name)
		assert.Equal(t, c.held, g.Held, "%s: held", c.name)
		err := (&Report{Felt: &FeltResult{Rows: []FeltGoal{{Name: "fine", Judge: Info, Held: true, Met: true}, g}}}).BarErr()
		if c.held {
			assert.NoError(t, err, c.name)
		} else {
			require.ErrorIs(t, err, ErrBar, c.name)
			assert.Contains(t, err.Error(), c.name)
			assert.NotContains(t, err.Error(), "fine")
		}
	}
	assert.NoError(t, (&Report{}).BarErr(), "no goals suite, nothing to fail")
}

// TestGoalsSuiteQuick runs the goals suite's --quick path, at sizes
// smaller still (seconds): every one of issue #36's goals has a row with a
// measured figure, its goal and bar, in the goals table, the Markdown
// section and the JSON. The figures' verdicts are not asserted here
// (timing on a shared machine); the cost rows, whose token counts follow
// from the seed, are.
func TestGoalsSuiteQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the goals suite (seconds)")
	}
	// In parallel with the others: no verdict of a timed figure is
	// asserted, and only this test sets feltSizing.
	t.Parallel()
	quick := feltSizes(true)
	require.NotEmpty(t, quick.quickScaledTo)
	tiny := quick
	tiny.wallSteps, tiny.engineDisks, tiny.engineRuns, tiny.rateTasks = 6, 3, 1, 6 // the cost rows keep --quick's steps: their bars are set at its figures
	tiny.workerTasks, tiny.workerDisks, tiny.cpuDisks, tiny.journalDisks, tiny.journalRuns = 4, 2, 13, 2, 1
	feltSizing = func(q bool) feltSize {
		assert.True(t, q, "the quick path")
		return tiny
	}
	t.Cleanup(func() { feltSizing = feltSizes })
	rep, err := Run(context.Background(), Options{Suites: []string{"goals"}, Quick: true, Seed: 1})
	require.NoError(t, err)
	require.NotNil(t, rep.Felt)
	want := []string{"20-disk Hanoi on the sim: CPU", "memory at 13 disks over 12", "journaled over unjournaled wall", "journaled over unjournaled CPU",
		"wall per decided step over model latency", "NATS engine (embedded) over in-process wall", "dollars per decided step over its floor, short",
		"dollars per decided step over its floor, reasoning", "share of the allowed rate used", "429 answers per 1,000 calls", "throughput on 4 workers over 1", "the same at maker solve's default --concurrency"}
	require.Len(t, rep.Felt.Rows, len(want))
	md := rep.Markdown()
	assert.Contains(t, md, "## User-felt goals (issue #36)")
	for i, g := range rep.Felt.Rows {
		assert.Contains(t, g.Name, want[i])
		assert.False(t, math.IsNaN(g.Figure) || math.IsInf(g.Figure, 0), "%s: %v", g.Name, g.Figure)
		assert.Contains(t, md, "| "+g.Name+" | ")
		assert.NotEmpty(t, g.Measured, g.Name)
		if g.Judge != Info {
			assert.Positive(t, g.Bar, g.Name)
		}
		if strings.HasPrefix(g.Name, "dollars") {
			assert.True(t, g.Held, "%s: %v is reproducible from the seed and holds its bar", g.Name, g.Figure)
			assert.Greater(t, g.Figure, 1.0, "%s: the bill is never below its output", g.Name)
		}
	}
	assert.Contains(t, rep.Felt.Rows[0].Note, "--quick", "a quick run says what it scaled")
	found := 0
	for _, g := range rep.Goals {
		if strings.Contains(g.Goal, "bar ") {
			found++
		}
	}
	assert.Equal(t, len(want)-2, found, "every judged row is in the goals table with its bar")
	data, err := json.Marshal(rep)
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal(data, &back))
	require.NotNil(t, back.Felt)
	assert.Equal(t, rep.Felt.Rows, back.Felt.Rows)
	t.Log(md[strings.Index(md, "## User-felt"):])
}
