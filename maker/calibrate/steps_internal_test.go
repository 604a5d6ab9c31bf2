package calibrate

import (
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHanoiAtIsTheSolution walks the solution move by move and finds, at
// every i, the state and last move hanoiAt computes in closed form.
func TestHanoiAtIsTheSolution(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 10; n++ {
		s := hanoi.Start(n)
		var prev *hanoi.Move
		i := 0
		check := func() {
			got, gotPrev := hanoiAt(n, i)
			require.True(t, got.Equal(s), "n=%d i=%d: %v, want %v", n, i, got, s)
			assert.Equal(t, prev, gotPrev, "n=%d i=%d", n, i)
		}
		check()
		for m := range hanoi.Moves(n) {
			var err error
			s, err = s.Apply(m)
			require.NoError(t, err)
			prev = &m
			i++
			if i < hanoi.TotalSteps(n) {
				check()
			}
		}
		require.True(t, s.Equal(hanoi.Goal(n)))
	}
}

func TestPickDrawsDistinctStepsUniformly(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []int{0, 1, 2, 3, 4}, pick(5, 9, 1), "all of a small task")
	a := pick(1_000_000, 200, 7)
	assert.Equal(t, a, pick(1_000_000, 200, 7), "the same seed, the same steps")
	assert.NotEqual(t, a, pick(1_000_000, 200, 8))
	require.Len(t, a, 200)
	for i := 1; i < len(a); i++ {
		assert.Less(t, a[i-1], a[i], "sorted and distinct")
	}
	assert.GreaterOrEqual(t, a[0], 0)
	assert.Less(t, a[len(a)-1], 1_000_000)

	// Uniform: over many draws of 3 of 6, each step is chosen half the
	// time. 20,000 draws give each count a binomial sd of sqrt(n/4) ≈ 71;
	// 5 sd is 354.
	const draws = 20000
	counts := make([]int, 6)
	for seed := range uint64(draws) {
		for _, s := range pick(6, 3, seed) {
			counts[s]++
		}
	}
	for s, c := range counts {
		assert.InDelta(t, draws/2, c, 354, "step %d", s)
	}
}
