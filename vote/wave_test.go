package vote_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaveFromPartitionsTheLaunches: every draw sees the wave it was
// launched in; the waves hold their own indices, do not overlap, cover
// every launched index, and number Rounds.
func TestWaveFromPartitionsTheLaunches(t *testing.T) {
	var mu sync.Mutex
	waves := map[vote.Wave][]int{}
	draw := func(ctx context.Context, i int) vote.Sample[int] {
		w, ok := vote.WaveFrom(ctx)
		require.True(t, ok)
		mu.Lock()
		waves[w] = append(waves[w], i)
		mu.Unlock()
		key := uint64(1)
		if i%3 == 1 { // a dissenting vote now and then: more waves
			key = 2
		}
		return vote.Sample[int]{Value: i, Key: key}
	}
	res, err := vote.Race(context.Background(), vote.Config{K: 3, Parallel: 4, Speculate: 1}, draw)
	require.NoError(t, err)
	assert.Len(t, waves, res.Rounds)
	seen := map[int]bool{}
	for w, idx := range waves {
		assert.Len(t, idx, w.N, "wave %+v", w)
		for _, i := range idx {
			assert.True(t, i >= w.First && i < w.First+w.N, "index %d outside its wave %+v", i, w)
			assert.False(t, seen[i], "index %d drawn twice", i)
			seen[i] = true
		}
	}
	assert.Len(t, seen, res.Launched)
	_, ok := vote.WaveFrom(context.Background())
	assert.False(t, ok)
}
