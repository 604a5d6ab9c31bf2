package benchmarks

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFidelityUnchangedBySamplesPerCall: every Hanoi cell of the
// fidelity suite (both rival structures, every p and k, on 5 disks; all
// but eight rivals at p 0.6, whose wrong answers take 20 s to draw) with a wave's samples in few requests is the cell with one
// request each: the same votes and wrong steps, while the requests really
// are fewer wherever a wave holds more than the temperature-0 sample
// (k >= 3); and one cell at full confidence still matches the
// gambler's-ruin theory.
func TestFidelityUnchangedBySamplesPerCall(t *testing.T) {
	ctx := context.Background()
	cells := func(per int) []FidelityCell {
		fidelitySamplesPerCall = per
		defer func() { fidelitySamplesPerCall = 1 }()
		var out []FidelityCell
		for _, rivals := range []int{1, spreadRivals} {
			for _, p := range fidelityPs {
				for _, k := range fidelityKs {
					if rivals == spreadRivals && p == fidelityPs[0] {
						continue // 22 s under load for 31 steps; the suite runs it
					}
					c, err := fidelityHanoi(ctx, 7, 5, 1, rivals, p, k)
					require.NoError(t, err)
					out = append(out, c)
				}
			}
		}
		return out
	}
	one, batched := cells(1), cells(maker.SamplesPerCallAuto)
	require.Len(t, batched, len(one))
	fewer := 0
	for i := range one {
		o, b := one[i], batched[i]
		name := fmt.Sprintf("rivals %d, p %v, k %d", o.Rivals, o.P, o.K)
		assert.Equal(t, o.Votes, b.Votes, name)
		assert.Equal(t, o.Wrong, b.Wrong, name)
		assert.Equal(t, o.Match(), b.Match(), name)
		assert.Equal(t, o.samples, o.requests, "%s: one request a sample", name)
		assert.Equal(t, o.samples, b.samples, name)
		assert.LessOrEqual(t, b.requests, b.samples, name)
		if o.K >= 3 {
			assert.Less(t, b.requests, b.samples, "%s: several samples per request", name)
			fewer++
		}
	}
	assert.Equal(t, (2*len(fidelityPs)-1)*(len(fidelityKs)-2), fewer, "every cell at k >= 3 (fidelityKs: 1, 2, 3, 5)")

	full, err := func() (FidelityCell, error) {
		fidelitySamplesPerCall = maker.SamplesPerCallAuto
		defer func() { fidelitySamplesPerCall = 1 }()
		return fidelityHanoi(ctx, 7, 6, 2, 1, 0.8, 3)
	}()
	require.NoError(t, err)
	assert.Less(t, full.requests, full.samples)
	assert.Less(t, math.Abs(full.Z), 4.0, "%+v", full)
	assert.True(t, full.Wrong.Contains(full.WrongTheory), "%+v", full)
}

// TestCostSuiteQuick: the cost suite (on 12 steps, half --quick's: no
// assertion counts steps) runs every row; samples per
// request pays fewer requests and input tokens than one call per sample
// at 20 disks (k >= 3), caching reads cached tokens except under
// OpenAI's 1024-token minimum, every row decides the same steps with the
// same wrong steps, and the report and chart render.
func TestCostSuiteQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 32 short runs over HTTP")
	}
	t.Parallel() // counts tokens and requests, no time
	r, err := runCostSteps(context.Background(), Options{Quick: true, Seed: 3}, 12, func() {})
	require.NoError(t, err)
	require.Len(t, r.Rows, costUnits())
	for _, g := range costGroups(r) {
		paper := costRow(r, g, "one call per sample (paper)")
		require.NotNil(t, paper)
		assert.Equal(t, paper.Samples, paper.Requests, g)
		for _, st := range costStrategies {
			row := costRow(r, g, st.name)
			require.NotNil(t, row, "%s %s", g, st.name)
			assert.Equal(t, paper.Steps, row.Steps)
			assert.Equal(t, paper.WrongSteps, row.WrongSteps, "%s %s: equal wrong steps", g, st.name)
			if st.cache && !st.openAI {
				assert.Positive(t, row.CachedInputTokens, "%s %s", g, st.name)
			} else {
				assert.Zero(t, row.CachedInputTokens, "%s %s", g, st.name)
			}
			assert.LessOrEqual(t, row.Ratio, 1.0+1e-9, "%s %s: never dearer than the paper's way", g, st.name)
			out := float64(row.OutputTokens) * r.Price.OutputPerMillion / 1e6 / float64(row.Steps)
			assert.InDelta(t, out/paper.DollarsPerStep, row.Floor, 1e-9, "%s %s: the floor is the output dollars over the paper's", g, st.name)
			assert.LessOrEqual(t, row.Floor, row.Ratio+1e-9, "%s %s: no row goes below its floor", g, st.name)
		}
		in := float64(paper.InputTokens) * r.Price.InputPerMillion / 1e6 / float64(paper.Steps)
		assert.InDelta(t, 1, paper.Floor+in/paper.DollarsPerStep, 1e-9, "%s: the paper's bill is its input plus its output", g)
	}
	n := costRow(r, "20 disks, short", "samples per request")
	paper := costRow(r, "20 disks, short", "one call per sample (paper)")
	assert.Less(t, n.Requests, paper.Requests)
	assert.Less(t, n.InputTokens, paper.InputTokens)
	md := (&Report{Cost: r}).Markdown()
	assert.Contains(t, md, "## Cost: dollars per decided step")
	charts, err := (&Report{Cost: r}).Charts()
	require.NoError(t, err)
	assert.Contains(t, charts, "cost.svg")
	g := costGoal(r)
	assert.NotEqual(t, "not run", g.Met)
}

// TestCostFloorOfTheCommittedRun checks the arithmetic behind the cost
// goal with the code's own pricing, on the committed report's figures for
// 20 disks at reasoning length (the paper's row: 400 steps, 860,560 input
// and 704,828 output tokens at gpt-4.1-mini's $0.40/$1.60): the paper's
// way costs $1.47, of which output is $1.13, so even with every input
// token free the ratio is at least 0.766 > 0.5.
func TestCostFloorOfTheCommittedRun(t *testing.T) {
	price, ok := models.BuiltinPrice("openai", "gpt-4.1-mini")
	require.True(t, ok)
	paper := CostRow{Steps: 400, InputTokens: 860560, OutputTokens: 704828}
	total := price.Cost(vote.Usage{InputTokens: paper.InputTokens, OutputTokens: paper.OutputTokens})
	assert.InDelta(t, 1.4719, total, 1e-4)
	out := outputDollarsPerStep(paper, price) * float64(paper.Steps)
	assert.InDelta(t, 1.1277, out, 1e-4)
	floor := outputDollarsPerStep(paper, price) / (total / float64(paper.Steps))
	assert.InDelta(t, 0.766, floor, 1e-3)
	assert.Greater(t, floor, 0.5, "the goal is below the floor")
	// Every input token free and cached: still the floor.
	free := maker.Price{InputPerMillion: 0, OutputPerMillion: price.OutputPerMillion}
	assert.InDelta(t, floor, free.Cost(vote.Usage{InputTokens: paper.InputTokens, OutputTokens: paper.OutputTokens})/total, 1e-12)
}
