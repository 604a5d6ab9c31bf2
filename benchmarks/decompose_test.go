package benchmarks

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyDecompose is a decompose suite of two kinds of two problems at two p.
var tinyDecompose = decomposeSize{cells: []decomposeCell{{"multiply", "multiply 4×4", 4, 2}, {"sort", "sort 8", 8, 2}}, ps: []float64{0.9, 0.99}, parallel: 4}

// TestDecomposeSuiteSmall runs the decompose suite at a tiny size: every
// cell is there with its problems counted, the figures are the runs'
// (dollars from the price over the samples' tokens), the same problems
// give the same figures, and the report and chart render.
func TestDecomposeSuiteSmall(t *testing.T) {
	sz := tinyDecompose
	ticks := 0
	res, err := runDecomposeSized(context.Background(), 3, sz, func() { ticks++ })
	require.NoError(t, err)
	require.Len(t, res.Rows, 2*2*2, "problem kinds × p × strategies")
	assert.Equal(t, len(res.Rows), ticks)
	for _, r := range res.Rows {
		assert.Equal(t, 2, r.Problems, r.Problem)
		assert.Equal(t, 2, r.Correct, "%s p %v %s: at these p every problem is right", r.Problem, r.P, r.Strategy)
		assert.Positive(t, r.Samples)
		assert.Positive(t, r.Dollars)
		assert.Greater(t, r.FailureUpper, 0.0, "two problems bound little")
	}
	// p 0.99 needs fewer samples than p 0.9, for each kind and strategy.
	assert.Less(t, res.Rows[2].Samples, res.Rows[0].Samples)
	again, err := runDecomposeSized(context.Background(), 3, sz, func() {})
	require.NoError(t, err)
	// The dollars are sums of floats in the order decisions finished
	// (decompose.Result.Cost): equal to rounding.
	for i := range again.Rows {
		assert.InDelta(t, res.Rows[i].Dollars, again.Rows[i].Dollars, 1e-12)
		again.Rows[i].Dollars = res.Rows[i].Dollars
	}
	assert.Equal(t, res, again, "the figures are a function of the seed")

	rep := &Report{Decompose: res}
	assert.Contains(t, rep.Markdown(), "| multiply 4×4 | 0.9 | first-to-k | 2 | 2 |")
	charts, err := rep.Charts()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(charts["decompose.svg"]), "<?xml"), "the chart renders")
}

// TestDecomposeCellsAreTheFamilies: the suite's cells come from the
// built-in families' Bench (problems.Builtins): today's, in order.
func TestDecomposeCellsAreTheFamilies(t *testing.T) {
	full, quick := decomposeSizes(false), decomposeSizes(true)
	assert.Equal(t, []decomposeCell{{"multiply", "multiply 5×5", 5, 200}, {"multiply", "multiply 6×6", 6, 200},
		{"multiply", "multiply 10×10", 10, 200}, {"sort", "sort 500", 500, 50}}, full.cells)
	assert.Equal(t, []decomposeCell{{"multiply", "multiply 5×5", 5, 3}, {"multiply", "multiply 6×6", 6, 3},
		{"multiply", "multiply 10×10", 10, 3}, {"sort", "sort 40", 40, 2}}, quick.cells)
	assert.Equal(t, 16, full.parallel)
	assert.Equal(t, 8, quick.parallel)
	assert.Equal(t, 4*3*2, decomposeUnits(true))
}
