package vote

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call is a tool call coded as tool*100 + args.
func callSample(v int) Sample[int] { return Sample[int]{Value: v, Key: uint64(v) + 1} }

func toolOf(v int) uint64 { return uint64(v/100) + 1 }

// drawsCounted draws vals[i % len] and counts the draws per index.
func drawsCounted(vals []int, counts *sync.Map) Drawer[int] {
	return func(_ context.Context, i int) Sample[int] {
		n, _ := counts.LoadOrStore(i, new(int))
		*(n.(*int))++ // each index is drawn by one goroutine at a time
		return callSample(vals[i%len(vals)])
	}
}

// The tool is voted first, then its arguments among that tool's samples;
// the first race's samples are not drawn again.
func TestRaceGroupedVotesToolThenArguments(t *testing.T) {
	// rm(a) rm(b) ls(x) rm(a) rm(b) rm(a) rm(a) ...: tools rm 6, ls 1;
	// arguments a 4, b 2 among rm.
	vals := []int{101, 102, 200, 101, 102, 101, 101, 101}
	var counts sync.Map
	res, err := RaceGrouped(context.Background(), Config{K: 2, Parallel: 1}, toolOf, nil, drawsCounted(vals, &counts))
	require.NoError(t, err)
	assert.Equal(t, 101, res.Winner)
	assert.Equal(t, uint64(102), res.Key)
	assert.Equal(t, map[uint64]int{102: 4, 103: 2}, res.Votes, "rm(a) 4, rm(b) 2: ls is no vote on rm's arguments")
	assert.Equal(t, 1, res.Flags[ErrOtherGroup.Error()])
	counts.Range(func(k, v any) bool {
		assert.Equal(t, 1, *(v.(*int)), "index %d drawn once", k)
		return true
	})
	assert.Equal(t, 7, res.Launched, "draws made: the second race counted 7 samples, the first race drew none of them twice")

	// A plain race on the whole call: rm(a) needs its own lead of 2 over
	// rm(b) and ls alike; the hierarchy decides the same call here.
	plain, err := Race(context.Background(), Config{K: 2, Parallel: 1}, func(_ context.Context, i int) Sample[int] { return callSample(vals[i%len(vals)]) })
	require.NoError(t, err)
	assert.Equal(t, 101, plain.Winner)
}

// The group decides first: a tool whose arguments split loses nothing
// to a rival tool whose single call repeats.
func TestRaceGroupedSplitArgumentsKeepTheirTool(t *testing.T) {
	// grep(x) grep(y) grep(z) find(w) find(w) find(w) grep(x) grep(x) ...
	vals := []int{101, 102, 103, 200, 200, 200, 101, 101, 101, 101}
	draw := func(_ context.Context, i int) Sample[int] { return callSample(vals[min(i, len(vals)-1)]) }
	res, err := RaceGrouped(context.Background(), Config{K: 2, Parallel: 1}, toolOf, nil, draw)
	require.NoError(t, err)
	assert.Equal(t, 1, int(toolOf(res.Winner))-1, "grep, the tool most samples chose")
	plain, err := Race(context.Background(), Config{K: 2, Parallel: 1}, draw)
	require.NoError(t, err)
	assert.Equal(t, 200, plain.Winner, "a plain vote on whole calls: find's one repeated call wins while grep's split")
}

// Hierarchical classes and winners do not depend on Parallel or
// Speculate.
func TestRaceGroupedDeterministicAcrossParallel(t *testing.T) {
	ctx := context.Background()
	for step := range 40 {
		draw := func(_ context.Context, i int) Sample[int] {
			h := hash3(uint64(step), uint64(i), 41)
			tool := 1
			if unitFloat(splitmix(h)) > 0.7 {
				tool = 2
			}
			args := 0
			if unitFloat(splitmix(h^5)) > 0.75 {
				args = int(splitmix(h^9) % 3)
			}
			return callSample(tool*100 + args)
		}
		want, err := RaceGrouped(ctx, Config{K: 3, Parallel: 1}, toolOf, nil, draw)
		require.NoError(t, err)
		for _, cfg := range []Config{{K: 3, Parallel: 3}, {K: 3, Parallel: 3, Speculate: 2}} {
			got, err := RaceGrouped(ctx, cfg, toolOf, nil, draw)
			require.NoError(t, err)
			name := fmt.Sprintf("step %d %+v", step, cfg)
			require.Equal(t, want.Winner, got.Winner, name)
			require.Equal(t, want.Votes, got.Votes, name)
			require.Equal(t, want.Valid, got.Valid, name)
		}
	}
}
