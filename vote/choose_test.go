package vote

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nearest is a Choose that sees every class at once: the representative
// nearest v within tol (not the first), ties to the earlier class.
func nearest(tol float64) Choose[float64] {
	return func(reps []float64, v float64) (int, error) {
		best, at := math.Inf(1), -1
		for i, r := range reps {
			if d := math.Abs(r - v); d <= tol && d < best {
				best, at = d, i
			}
		}
		return at, nil
	}
}

// A Choose names the class: here the nearest, where RaceMatching would
// take the first it matches.
func TestRaceChoosingJoinsTheChosenClass(t *testing.T) {
	vals := []float64{1.0, 1.6, 1.5, 1.5, 1.55}
	draw := func(_ context.Context, i int) Sample[float64] { return floatSample(vals[i]) }
	res, err := RaceChoosing(context.Background(), Config{K: 5, MaxSamples: len(vals)}, nearest(0.55), draw)
	require.ErrorIs(t, err, ErrUndecided)
	// 1.0 starts A; 1.6 starts B; 1.5 is nearer B (0.1) than A (0.5).
	assert.Equal(t, map[uint64]int{floatSample(1.0).Key: 1, floatSample(1.6).Key: 4}, res.Votes)
	first, err := RaceChoosing(context.Background(), Config{K: 5, MaxSamples: len(vals)}, FirstMatch(within(0.55)), draw)
	require.ErrorIs(t, err, ErrUndecided)
	assert.Equal(t, map[uint64]int{floatSample(1.0).Key: 4, floatSample(1.6).Key: 1}, first.Votes, "the first-match rule differs")
}

// Classes under a Choose do not depend on Parallel or Speculate, and a
// key seen before never calls it again.
func TestRaceChoosingDeterministicAcrossParallel(t *testing.T) {
	ctx := context.Background()
	for step := range 30 {
		want, err := RaceChoosing(ctx, Config{K: 3, Parallel: 1}, nearest(0.45), noisy(step))
		require.NoError(t, err)
		for _, cfg := range []Config{{K: 3, Parallel: 4}, {K: 3, Parallel: 8, Speculate: 3}} {
			got, err := RaceChoosing(ctx, cfg, nearest(0.45), noisy(step))
			require.NoError(t, err)
			name := fmt.Sprintf("step %d %+v", step, cfg)
			require.Equal(t, want.Key, got.Key, name)
			require.Equal(t, want.Winner, got.Winner, name)
			require.Equal(t, want.Votes, got.Votes, name)
		}
	}
	calls := 0
	counting := func(reps []int, v int) (int, error) { calls++; return -1, nil }
	keys := []uint64{1, 2, 1, 2, 3}
	out, err := Classify(keys, []int{1, 2, 1, 2, 3}, counting)
	require.NoError(t, err)
	assert.Equal(t, keys, out)
	assert.Equal(t, 2, calls, "asked for 2 and 3 only: 1 has no earlier class, repeats are known")
}

// A failing Choose stops the race with ErrMatch and its error: no class
// is chosen from a failed call.
func TestRaceChoosingErrorStopsTheRace(t *testing.T) {
	boom := errors.New("embedder down")
	failing := func(reps []float64, v float64) (int, error) { return 0, boom }
	draw := func(_ context.Context, i int) Sample[float64] { return floatSample(float64(i)) }
	res, err := RaceChoosing(context.Background(), Config{K: 2}, failing, draw)
	require.ErrorIs(t, err, ErrMatch)
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 1, res.Valid, "the sample whose class failed is not counted")
	_, err = Classify([]uint64{1, 2}, []float64{1, 2}, failing)
	require.ErrorIs(t, err, ErrMatch)
	require.ErrorIs(t, err, boom)
}
