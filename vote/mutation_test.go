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

// TestRaceBackoffDoubles: failed draws in a row back off by a delay
// that doubles with the streak (each jittered into [d/2, d]), measured on
// synctest's clock (one draw at a time): five failures then K good
// samples wait at least 0.5+1+2+4+8 = 15.5 s and at most 31 s (the
// streak's count in drive; a streak that did not grow would wait at most
// 5 s).
func TestRaceBackoffDoubles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		res, err := Race(context.Background(), Config{K: 2, Parallel: 1, Backoff: time.Second, MaxBackoff: time.Hour, MaxErrors: 10},
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
