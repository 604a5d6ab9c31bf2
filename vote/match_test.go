package vote

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// within is a tolerance matcher over float samples: not transitive.
func within(tol float64) Match[float64] {
	return func(a, b float64) bool { return math.Abs(a-b) <= tol }
}

func floatSample(v float64) Sample[float64] {
	return Sample[float64]{Value: v, Key: math.Float64bits(v) | 1}
}

// A sample joins the FIRST earlier class it matches, in class creation
// order, even when it matches a later one too; the class votes under its
// first member's key.
func TestRaceMatchingJoinsFirstEarlierClass(t *testing.T) {
	vals := []float64{1.0, 1.6, 1.2, 1.5, 1.0}
	draw := func(_ context.Context, i int) Sample[float64] { return floatSample(vals[i]) }
	res, err := RaceChoosing(context.Background(), Config{K: 5, MaxSamples: len(vals)}, FirstMatch(within(0.5)), draw)
	require.ErrorIs(t, err, ErrUndecided)
	// 1.0 starts A; 1.6 (0.6 away) starts B; 1.2 matches both, joins A;
	// 1.5 matches both, joins A; 1.0 is A's own key.
	assert.Equal(t, map[uint64]int{floatSample(1.0).Key: 4, floatSample(1.6).Key: 1}, res.Votes)
	assert.Equal(t, map[uint64]uint64{floatSample(1.2).Key: floatSample(1.0).Key, floatSample(1.5).Key: floatSample(1.0).Key}, res.Classes,
		"each key that joined another's class, with that class")

	res, err = RaceChoosing(context.Background(), Config{K: 2}, FirstMatch(within(0.5)), draw)
	require.NoError(t, err)
	assert.Equal(t, floatSample(1.0).Key, res.Key, "a class's key is its first member's")
	assert.Equal(t, 1.0, res.Winner, "the winner is the class's first value")
	assert.Equal(t, 4, res.Valid, "A, B, A, A: a lead of 2 at index 3")
}

// With no matcher RaceMatching is Race: same winners, tallies, launches.
func TestRaceMatchingNilIsRace(t *testing.T) {
	ctx := context.Background()
	for _, par := range []int{1, 4} {
		cfg := Config{K: 3, Parallel: par}
		for step := range 100 {
			draw := oneRival(7, step, 0.7)
			want, err := Race(ctx, cfg, func(_ context.Context, i int) Sample[int] { return draw(i) })
			require.NoError(t, err)
			got, err := RaceChoosing(ctx, cfg, nil, func(_ context.Context, i int) Sample[int] { return draw(i) })
			require.NoError(t, err)
			name := fmt.Sprintf("parallel %d step %d", par, step)
			require.Equal(t, want.Key, got.Key, name)
			require.Equal(t, want.Votes, got.Votes, name)
			require.Equal(t, want.Launched, got.Launched, name)
			require.Nil(t, got.Classes, name)
		}
	}
}

// noisy draws, per (step, index), a value near 10 (right, p = 0.85,
// jittered within ±0.2) or near 12 (wrong), and sleeps a random while so
// that samples complete out of index order.
func noisy(step int) Drawer[float64] {
	return func(ctx context.Context, i int) Sample[float64] {
		h := hash3(uint64(step), uint64(i), 37)
		v := 10.0
		if unitFloat(splitmix(h^2)) >= 0.85 {
			v = 12
		}
		v += (unitFloat(splitmix(h)) - 0.5) * 0.4
		time.Sleep(time.Duration(splitmix(h^1)%300) * time.Microsecond)
		return floatSample(v)
	}
}

// Classes and winners under a matcher do not depend on Parallel or
// Speculate (the classes are formed in index order); with Speculate 0 the
// launches do not either, and nothing is cancelled.
func TestRaceMatchingDeterministicAcrossParallel(t *testing.T) {
	ctx := context.Background()
	for step := range 40 {
		want, err := RaceChoosing(ctx, Config{K: 3, Parallel: 1}, FirstMatch(within(0.45)), noisy(step))
		require.NoError(t, err)
		for _, cfg := range []Config{{K: 3, Parallel: 3}, {K: 3, Parallel: 8}, {K: 3, Parallel: 8, Speculate: 3}} {
			got, err := RaceChoosing(ctx, cfg, FirstMatch(within(0.45)), noisy(step))
			require.NoError(t, err)
			name := fmt.Sprintf("step %d %+v", step, cfg)
			require.Equal(t, want.Key, got.Key, name)
			require.Equal(t, want.Winner, got.Winner, name)
			require.Equal(t, want.Votes, got.Votes, name)
			require.Equal(t, want.Valid, got.Valid, name)
			if cfg.Speculate == 0 {
				require.Equal(t, want.Launched, got.Launched, name)
				require.Zero(t, got.Cancelled, name)
			}
		}
		// The synchronous core, completing each wave in reverse, agrees.
		c, err := (Config{K: 3, Parallel: 5}).WithDefaults()
		require.NoError(t, err)
		r := newRacer[float64](c)
		r.classes = &classes[float64]{choose: FirstMatch(within(0.45))}
		d := noisy(step)
		for !r.over {
			n := r.plan()
			if r.over {
				break
			}
			require.Positive(t, n, "the core planned nothing with nothing in flight")
			first := r.launch(n)
			for j := n - 1; j >= 0; j-- {
				r.complete(first+j, d(ctx, first+j))
			}
		}
		got, err := r.result(0)
		require.NoError(t, err)
		require.Equal(t, want.Votes, got.Votes, "step %d, synchronous core", step)
		require.Equal(t, want.Launched, got.Launched, "step %d, synchronous core", step)
	}
}

// The race a matcher exists for: right answers in jittered forms decide
// in about the samples of one form; with exact keys they split.
func TestRaceMatchingDecidesWhatExactKeysSplit(t *testing.T) {
	ctx := context.Background()
	matched, exact, wrong := 0, 0, 0
	for step := range 50 {
		res, err := RaceChoosing(ctx, Config{K: 3, MaxSamples: 40}, FirstMatch(within(0.45)), noisy(step))
		require.NoError(t, err)
		if math.Abs(res.Winner-10) > 0.2 {
			wrong++
		}
		matched += res.Valid
		res, _ = Race(ctx, Config{K: 3, MaxSamples: 40}, noisy(step))
		exact += res.Valid
	}
	t.Logf("50 steps, k=3: %d valid samples matched, %d exact; %d wrong winners matched", matched, exact, wrong)
	assert.LessOrEqual(t, wrong, 3, "p = 0.85, k = 3: a wrong winner about once in 180 steps")
	assert.Greater(t, exact, 3*matched, "exact keys split every jittered answer")
}

// Classify groups as a race does: the same classes as RaceChoosing's
// Votes for the same sample order.
func TestClassifyIsTheRaceRule(t *testing.T) {
	vals := []float64{1.0, 1.6, 1.2, 1.5, 1.0, 2.2}
	keys := make([]uint64, len(vals))
	for i, v := range vals {
		keys[i] = floatSample(v).Key
	}
	got, err := Classify(keys, vals, FirstMatch(within(0.5)))
	require.NoError(t, err)
	a, b := floatSample(1.0).Key, floatSample(1.6).Key
	assert.Equal(t, []uint64{a, b, a, a, a, floatSample(2.2).Key}, got)
	plain, err := Classify(keys, vals, nil)
	require.NoError(t, err)
	assert.Equal(t, keys, plain, "no matcher: the keys")
	res, err := RaceChoosing(context.Background(), Config{K: len(vals), MaxSamples: len(vals)}, FirstMatch(within(0.5)),
		func(_ context.Context, i int) Sample[float64] { return floatSample(vals[i]) })
	require.ErrorIs(t, err, ErrUndecided)
	counts := map[uint64]int{}
	for _, k := range got {
		counts[k]++
	}
	assert.Equal(t, counts, res.Votes)
}
