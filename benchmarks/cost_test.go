package benchmarks

import (
	"context"
	"math"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFidelityUnchangedBySamplesPerCall: the Hanoi fidelity cell with a
// wave's samples in few requests is the cell with one request each (the
// same samples vote), and still matches the gambler's-ruin theory.
func TestFidelityUnchangedBySamplesPerCall(t *testing.T) {
	one, err := fidelityHanoi(context.Background(), 7, 6, 2, 1, 0.8, 3)
	require.NoError(t, err)
	fidelitySamplesPerCall = maker.SamplesPerCallAuto
	defer func() { fidelitySamplesPerCall = 1 }()
	batched, err := fidelityHanoi(context.Background(), 7, 6, 2, 1, 0.8, 3)
	require.NoError(t, err)
	assert.Equal(t, one.Votes, batched.Votes)
	assert.Equal(t, one.Wrong, batched.Wrong)
	assert.Less(t, math.Abs(batched.Z), 4.0, "%+v", batched)
	assert.True(t, batched.Wrong.Contains(batched.WrongTheory), "%+v", batched)
}

// TestCostSuiteQuick: the quick cost suite runs every row; samples per
// request pays fewer requests and input tokens than one call per sample
// at 20 disks (k >= 3), caching reads cached tokens except under
// OpenAI's 1024-token minimum, every row decides the same steps with the
// same wrong steps, and the report and chart render.
func TestCostSuiteQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 64 short runs over HTTP")
	}
	r, err := runCost(context.Background(), Options{Quick: true, Seed: 3}, func() {})
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
		}
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
