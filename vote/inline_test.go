package vote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRaceInlineIsRaceSequential: over many random vote sequences (red
// flags, failed draws, budgets, every ending), RaceInline gives exactly
// Race's result with Parallel = 1, whatever Parallel and Speculate cfg
// asks for, and matches the sequential reference.
func TestRaceInlineIsRaceSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	ctx := context.Background()
	kinds := map[error]int{}
	for trial := range 300 {
		s := randomSpec(rng)
		want := reference(s)
		kinds[want.cause]++
		seqRes, seqErr := Race(ctx, s.config(1, 0), func(_ context.Context, i int) Sample[int] { return s.sample(i) })
		for _, ps := range []struct{ par, spec int }{{1, 0}, {3, 0}, {8, 3}} {
			name := fmt.Sprintf("trial %d %+v parallel=%d speculate=%d", trial, s, ps.par, ps.spec)
			res, err := RaceInline(ctx, s.config(ps.par, ps.spec), func(_ context.Context, i int) Sample[int] { return s.sample(i) })
			if seqErr == nil {
				require.NoError(t, err, name)
			} else {
				require.EqualError(t, err, seqErr.Error(), name)
				require.ErrorIs(t, err, want.cause, name)
			}
			res.Wall, seqRes.Wall = 0, 0
			require.Equal(t, seqRes, res, name)
			require.Equal(t, want.votes, res.Votes, name)
			require.Equal(t, want.valid+want.flagged+want.errs, res.Launched, name)
		}
	}
	for _, cause := range []error{nil, ErrUndecided, ErrTooManyErrors} {
		assert.Greater(t, kinds[cause], 10, "ending %v", cause)
	}
}

// TestRaceInlineDrawsOnTheCaller: no goroutine is started, draws run one
// at a time, and the drawer's context is the caller's.
func TestRaceInlineDrawsOnTheCaller(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "caller")
	inDraw := false
	res, err := RaceInline(ctx, Config{K: 3, Parallel: 3}, func(c context.Context, i int) Sample[int] {
		require.False(t, inDraw, "two draws at once")
		inDraw = true
		defer func() { inDraw = false }()
		assert.Equal(t, "caller", c.Value(key{}))
		key := uint64(1)
		if i == 1 {
			key = 2
		}
		return Sample[int]{Value: i, Key: key}
	})
	require.NoError(t, err)
	assert.Equal(t, 5, res.Launched)
	assert.Equal(t, 5, res.Rounds)
}

func TestRaceInlinePanicIsAFailedDraw(t *testing.T) {
	res, err := RaceInline(context.Background(), Config{K: 2, Backoff: time.Nanosecond}, func(_ context.Context, i int) Sample[int] {
		if i == 1 {
			panic("boom")
		}
		return Sample[int]{Key: 1}
	})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Errors)
	assert.Equal(t, 3, res.Launched)

	_, err = RaceInline(context.Background(), Config{MaxErrors: 1, Backoff: time.Nanosecond}, func(context.Context, int) Sample[int] {
		panic(errors.New("always"))
	})
	require.ErrorIs(t, err, ErrPanic)
	require.ErrorIs(t, err, ErrTooManyErrors)
}

// TestRaceInlineStopsWithItsContext: a context cancelled by a draw (as the
// solver cancels a race on a permanent error) ends the race at once with
// the cause, the draw's usage counted.
func TestRaceInlineStopsWithItsContext(t *testing.T) {
	cause := errors.New("permanent")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	res, err := RaceInline(ctx, Config{K: 3}, func(_ context.Context, i int) Sample[int] {
		if i == 1 {
			cancel(cause)
		}
		return Sample[int]{Key: 1, Usage: Usage{InputTokens: 1}}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, cause)
	assert.Equal(t, 2, res.Launched)
	assert.Equal(t, 1, res.Valid)
	assert.Equal(t, 2, res.Usage.InputTokens)

	// Cancelled during a backoff wait.
	ctx2, cancel2 := context.WithCancel(context.Background())
	_, err = RaceInline(ctx2, Config{K: 3, Backoff: time.Hour}, func(context.Context, int) Sample[int] {
		time.AfterFunc(time.Millisecond, cancel2)
		return Sample[int]{Err: errors.New("flaky")}
	})
	require.ErrorIs(t, err, context.Canceled)
}

func TestRaceInlineZeroKeyAndNilDrawer(t *testing.T) {
	_, err := RaceInline(context.Background(), Config{}, func(context.Context, int) Sample[int] { return Sample[int]{} })
	require.ErrorIs(t, err, ErrConfig)
	_, err = RaceInline[int](context.Background(), Config{}, nil)
	require.ErrorIs(t, err, ErrConfig)
	_, err = RaceInline(context.Background(), Config{K: -1}, func(context.Context, int) Sample[int] { return Sample[int]{Key: 1} })
	require.ErrorIs(t, err, ErrConfig)
}

func BenchmarkRaceInline(b *testing.B) {
	const k = 16
	ctx := context.Background()
	for _, name := range []string{"agree", "contested"} {
		keyOf := benchDraws[name]
		draw := func(_ context.Context, i int) Sample[int] {
			return Sample[int]{Value: i, Key: keyOf(i), Usage: Usage{Latency: 1}}
		}
		b.Run(name, func(b *testing.B) {
			perSample(b, func() int {
				res, err := RaceInline(ctx, Config{K: k}, draw)
				if err != nil {
					b.Fatal(err)
				}
				return res.Launched
			})
		})
	}
}

// TestRaceInlineAllocatesOnlyItsVotes: a decided inline race allocates
// only the Votes map it returns (the map and its one group): its racer
// lives on the caller's stack, its one pending slot inside the racer.
func TestRaceInlineAllocatesOnlyItsVotes(t *testing.T) {
	draw := func(ctx context.Context, i int) Sample[int] { return Sample[int]{Value: 7, Key: 9} }
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		res, err := RaceInline(ctx, Config{K: 3}, draw)
		if err != nil || res.Key != 9 || res.Votes[9] != 3 {
			t.Fatalf("race: %v, %+v", err, res)
		}
	})
	assert.LessOrEqual(t, allocs, 2.0)
}
