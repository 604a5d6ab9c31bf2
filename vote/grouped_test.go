package vote

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRaceGroupedMatchesSequentialReference: grouping a wave's draws never
// changes a result. The random vote sequences of
// TestRaceMatchesSequentialReference, raced with groups of every size
// (including sizes below 1 and past the wave's end, which mean 1 and the
// rest of the wave), end as the sequential rule does, and each index is
// drawn exactly once.
func TestRaceGroupedMatchesSequentialReference(t *testing.T) {
	before := goroutinesNow()
	rng := rand.New(rand.NewPCG(4, 2))
	ctx := context.Background()
	grouped := 0 // draws run after another of their group
	for trial := range 150 {
		s := randomSpec(rng)
		want := reference(s)
		sizes := []int{-1, 0, 1, 2, 3, 100}
		for _, ps := range []struct{ par, spec int }{{2, 0}, {3, 0}, {8, 0}, {3, 1}, {8, 3}} {
			size := sizes[rng.IntN(len(sizes))]
			name := fmt.Sprintf("trial %d %+v parallel=%d speculate=%d group=%d", trial, s, ps.par, ps.spec, size)
			var mu sync.Mutex
			drawn := map[int]int{}
			res, err := RaceGrouped(ctx, s.config(ps.par, ps.spec), func(_ context.Context, i int) Sample[int] {
				mu.Lock()
				drawn[i]++
				mu.Unlock()
				jitter(s.seed, i)
				return s.sample(i)
			}, func(w Wave, i int) int {
				if size > 1 && i < w.First+w.N-1 {
					grouped++
				}
				return size
			})
			if want.cause == nil {
				require.NoError(t, err, name)
				require.Equal(t, want.key, res.Key, name)
				require.Equal(t, want.first, res.Winner, name)
			} else {
				require.ErrorIs(t, err, want.cause, name)
			}
			require.Equal(t, want.votes, res.Votes, name)
			require.Equal(t, want.flags, res.Flags, name)
			require.Equal(t, want.valid, res.Valid, name)
			require.Equal(t, want.flagged, res.Flagged, name)
			require.Equal(t, want.errs, res.Errors, name)
			require.Len(t, drawn, res.Launched, name)
			for i := range res.Launched {
				require.Equal(t, 1, drawn[i], "%s: draws of index %d", name, i)
			}
		}
	}
	assert.Positive(t, grouped)
	settle(t, before)
}

// goroutineID is the calling goroutine's id, read from its stack header.
func goroutineID() string {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	var id string
	fmt.Sscanf(string(b[:n]), "goroutine %s", &id)
	return id
}

// TestRaceGroupedRunsAGroupInTurn: the draws of a group run one after
// another on one goroutine, in index order, each starting once the one
// before returned; other groups of the wave run beside them.
func TestRaceGroupedRunsAGroupInTurn(t *testing.T) {
	var mu sync.Mutex
	ids := map[int]string{}
	var zeroDone atomic.Bool
	started2 := make(chan struct{})
	res, err := RaceGrouped(context.Background(), Config{K: 3}, func(_ context.Context, i int) Sample[int] {
		mu.Lock()
		ids[i] = goroutineID()
		mu.Unlock()
		switch i {
		case 0:
			// Index 2 is a group of its own: it runs meanwhile.
			select {
			case <-started2:
			case <-time.After(10 * time.Second):
				t.Error("draw 2 did not run beside draw 0")
			}
			zeroDone.Store(true)
		case 1:
			assert.True(t, zeroDone.Load(), "draw 1 started before draw 0 of its group returned")
		case 2:
			close(started2)
		}
		return Sample[int]{Key: 7}
	}, func(w Wave, i int) int {
		if i == w.First {
			return 2
		}
		return 1
	})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Launched)
	assert.Equal(t, ids[0], ids[1], "a group's draws share a goroutine")
	assert.NotEqual(t, ids[0], ids[2], "groups run on goroutines of their own")
}

// TestRaceGroupedGoexitFailsTheRestOfItsGroup: a draw that calls
// runtime.Goexit is a failed draw, and so is every later draw of its
// group, which never runs; the race goes on.
func TestRaceGroupedGoexitFailsTheRestOfItsGroup(t *testing.T) {
	var ran sync.Map
	res, err := RaceGrouped(context.Background(), Config{K: 1, Parallel: 4, Speculate: 3, Backoff: NoBackoff}, func(_ context.Context, i int) Sample[int] {
		ran.Store(i, true)
		if i == 1 {
			runtime.Goexit()
		}
		return Sample[int]{Key: 5, Value: 10 + i}
	}, func(w Wave, i int) int {
		if i == 0 {
			return 4 // 0, 1, 2, 3 in turn
		}
		return 1
	})
	require.NoError(t, err)
	assert.Equal(t, 10, res.Winner)
	for _, i := range []int{2, 3} {
		_, ok := ran.Load(i)
		assert.False(t, ok, "draw %d ran after draw 1 exited its goroutine", i)
	}

	// Each of the group's draws is one failed draw, counted once.
	res, err = RaceGrouped(context.Background(), Config{K: 1, Parallel: 3, Speculate: 2, Backoff: NoBackoff}, func(_ context.Context, i int) Sample[int] {
		if i == 0 {
			runtime.Goexit()
		}
		return Sample[int]{Key: 5, Value: i}
	}, func(w Wave, i int) int {
		if i == 0 {
			return 3 // 0, 1, 2 in turn
		}
		return 1
	})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Errors)
	assert.Equal(t, 3, res.Winner) // the value of index 3, the first vote
	assert.Equal(t, 6, res.Launched)

	// Each of the group's failures is a failed draw of its own.
	_, err = RaceGrouped(context.Background(), Config{K: 1, Parallel: 3, Speculate: 2, MaxErrors: 2, Backoff: NoBackoff}, func(_ context.Context, i int) Sample[int] {
		if i == 0 {
			runtime.Goexit()
		}
		return Sample[int]{Key: 5}
	}, func(w Wave, i int) int { return 3 })
	require.ErrorIs(t, err, ErrTooManyErrors)
	require.ErrorIs(t, err, ErrPanic)
	assert.Contains(t, err.Error(), "draw 2 never ran: draw 0 of its group exited its goroutine")
}
