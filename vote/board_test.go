package vote

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// bruteLead recomputes the top key's lead from scratch.
func bruteLead(votes map[uint64]int) (top uint64, lead int) {
	counts := make([]int, 0, len(votes))
	best := -1
	for key, n := range votes {
		counts = append(counts, n)
		if n > best || (n == best && key < top) {
			top, best = key, n
		}
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	switch len(counts) {
	case 0:
		return 0, 0
	case 1:
		return top, counts[0]
	}
	return top, counts[0] - counts[1]
}

func TestBoardMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		k := 1 + rng.IntN(6)
		nkeys := 1 + rng.IntN(5)
		b := board{k: k}
		votes := map[uint64]int{}
		for n := range 60 {
			key := uint64(rng.IntN(nkeys)) * 7 // 0 is a key like any other
			votes[key]++
			got := b.add(key)
			top, lead := bruteLead(votes)
			require.Equal(t, lead, b.lead(), "trial %d vote %d: lead", trial, n)
			require.Equal(t, lead >= k, got, "trial %d vote %d: decided", trial, n)
			require.Equal(t, k-lead, b.need(), "trial %d vote %d: need", trial, n)
			if lead > 0 {
				require.Equal(t, top, b.top, "trial %d vote %d: top", trial, n)
			}
			require.Equal(t, votes, b.votes)
		}
	}
}

func TestWindowFIFOAcrossGrowth(t *testing.T) {
	var w window[int]
	next, front := 0, 0
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		if w.n == 0 || rng.IntN(3) > 0 {
			w.push()
			w.at(w.n - 1).s = Sample[int]{Value: next}
			next++
			continue
		}
		require.Equal(t, front, w.pop().Value)
		front++
	}
	for w.n > 0 {
		require.Equal(t, front, w.pop().Value)
		front++
	}
	require.Equal(t, next, front)
}
