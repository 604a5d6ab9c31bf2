package vote

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRaceInlineBackoffDoubles: failed draws in a row back off by a delay
// that doubles with the streak (each jittered into [d/2, d]), measured on
// synctest's clock (RaceInline starts no goroutine, so it runs in a
// bubble): five failures then K good samples wait at least
// 0.5+1+2+4+8 = 15.5 s and at most 31 s (inline.go:63, the streak's
// count; a streak that did not grow would wait at most 5 s).
func TestRaceInlineBackoffDoubles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		res, err := RaceInline(context.Background(), Config{K: 2, Backoff: time.Second, MaxBackoff: time.Hour, MaxErrors: 10},
			func(_ context.Context, i int) Sample[int] {
				if i < 5 {
					return Sample[int]{Err: errors.New("provider down")}
				}
				return Sample[int]{Value: 7, Key: 7}
			})
		waited := time.Since(start)
		require.NoError(t, err)
		assert.Equal(t, 7, res.Winner)
		assert.Equal(t, 5, res.Errors)
		assert.GreaterOrEqual(t, waited, 15500*time.Millisecond)
		assert.LessOrEqual(t, waited, 31*time.Second)
	})
}

// TestKMinAtAnExactTarget: with the target set to PFull(steps, k, p)
// itself, KMin is k, the smallest margin PFull accepts, though the
// logarithms then often put the ceiling one above (laws.go:115, the loop
// that settles the ceiling downwards; at steps 1, p 0.51 it is needed for
// every k from 2).
func TestKMinAtAnExactTarget(t *testing.T) {
	for _, steps := range []int{1, 100, 1000000} {
		for _, p := range []float64{0.51, 0.75, 0.99} {
			for k := 1; k < 30; k++ {
				target := PFull(steps, k, p)
				if !(target > 0 && target < 1) {
					continue
				}
				got, err := KMin(steps, p, target)
				require.NoError(t, err)
				assert.Equal(t, k, got, "steps %d, p %v, target PFull(k=%d)", steps, p, k)
			}
		}
	}
}
