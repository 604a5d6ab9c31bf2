package vote

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"context"
	"errors"
	"math"
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

// TestKMinAtTheCap: KMin refuses a k_min above 10⁹ (maxKMin), not one at
// it: at (steps 1, p, target) where the estimate ln(a)/ln r is exactly 10⁹
// KMin returns the smallest k PFull accepts (laws.go:108, `kf <=
// maxKMin`). Such inputs are found by bisecting the target, for p a few
// ulps from 0.50000000030099345 (within 3e-10 of 1/2), and trying the
// targets next to where the estimate crosses 10⁹; on amd64 the first p
// tried has one.
func TestKMinAtTheCap(t *testing.T) {
	found := 0
	for i, p := 0, 0.50000000030099345; i < 100 && found < 2; i, p = i+1, math.Nextafter(p, 1) {
		lnr := math.Log1p(-p) - math.Log(p)
		kf := func(target float64) float64 { return math.Log(math.Expm1(-math.Log(target))) / lnr }
		lo, hi := 0.7692, 0.7693 // kf grows with the target
		require.Less(t, kf(lo), float64(maxKMin))
		require.Greater(t, kf(hi), float64(maxKMin))
		for range 100 {
			if mid := (lo + hi) / 2; kf(mid) < maxKMin {
				lo = mid
			} else {
				hi = mid
			}
		}
		for target, j := math.Nextafter(lo, 0), 0; j < 4; target, j = math.Nextafter(target, 1), j+1 {
			if kf(target) != maxKMin {
				continue
			}
			found++
			k, err := KMin(1, p, target)
			require.NoError(t, err, "p %v, target %v", p, target)
			assert.GreaterOrEqual(t, PFull(1, k, p), target, "p %v, target %v: k %d", p, target, k)
			assert.Less(t, PFull(1, k-1, p), target, "p %v, target %v: k %d is not the smallest", p, target, k)
			assert.InDelta(t, maxKMin, k, 10, "p %v, target %v", p, target)
		}
	}
	require.Positive(t, found, "no (p, target) with an estimate of exactly 10⁹")
}

// TestLawWorkCountsEachMove: the work a law with rivals is charged (what
// MaxLawWork caps) is one update per state and answer voted for with a
// probability above zero, and a budget of exactly that work is enough.
// At k = 1 the first vote decides: from the one state, a right vote, a
// vote for rival 0 and a vote for the other rivals (interchangeable, one
// update for all): 3 updates; at p = 0 no right vote: 2 (rivals.go:263,
// the right vote's `m > 0`; :264 and :277, the counts of the right vote
// and of rival 0's; :329, the budget's `work > pr.budget`).
func TestLawWorkCountsEachMove(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want int
	}{{0.5, 3}, {0, 2}} {
		l, err := raceLaw(c.p, 1, Rivals{N: 5, Concentration: 0.2})
		require.NoError(t, err)
		assert.Equal(t, c.want, l.updates, "p %v", c.p)
		assert.InDelta(t, c.p, l.right, 1e-15, "p %v", c.p)
		assert.InDelta(t, 1, l.samples, 1e-15, "p %v", c.p)
		q := (1 - c.p) * 0.8 / 5
		pr := programme{k: 1, p: c.p, q0: 1 - c.p - 4*q, q: q, others: 4,
			stop: lawStopMany, prune: lawPrune, maxLoss: lawMaxLoss, budget: c.want}
		l, err = pr.run()
		require.NoError(t, err, "p %v, a budget of exactly the work", c.p)
		assert.Equal(t, c.want, l.updates, "p %v", c.p)
		pr.budget = c.want - 1
		_, err = pr.run()
		require.ErrorIs(t, err, ErrTooCostly, "p %v, a budget one short", c.p)
	}
}

// TestLawKeyTypeIsOnlyFaster: the several-rivals programme keys its states
// by a 16-byte array when every state fits in one (at most 14 rivals
// besides rival 0) and by a string otherwise; the array is only faster: the
// law and its work are those of the string-keyed programme. At 15 and more
// other rivals a state can hold 17 bytes, which an array would cut
// (rivals.go:218, the choice of key; a cut state loses a rival's votes:
// the work then differs by hundreds of updates, the law by 1e-13 to 1e-8).
func TestLawKeyTypeIsOnlyFaster(t *testing.T) {
	cases := []struct {
		p float64
		n int
	}{{0.7, 15}, {0.7, 16}, {0.7, 20}}
	if !raceDetector {
		cases = append(cases, struct {
			p float64
			n int
		}{0.6, 16})
	}
	for _, c := range cases {
		q := (1 - c.p) / float64(c.n)
		pr := programme{k: 2, p: c.p, q0: q, q: q, others: c.n - 1,
			stop: lawStopMany, prune: lawPrune, maxLoss: lawMaxLoss, budget: MaxLawWork}
		got, err := pr.run()
		require.NoError(t, err, "%+v", c)
		want, err := runProgramme(&pr, func(b []byte) string { return string(b) },
			func(key string, b []byte) []byte { return append(b[:0], key...) })
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, want.updates, got.updates, "%+v", c)
		assert.InEpsilon(t, want.samples, got.samples, 1e-13, "%+v", c)
		assert.InDelta(t, want.right, got.right, 1e-13, "%+v", c)
	}
}

// TestLawLossAtExactlyTheCap: the mass a law sets aside may reach maxLoss,
// not pass it. With p = 1/2 and two rivals at 1/4 every mass is a power of
// two, so the loss is exact: at k = 2 with states below 0.3 dropped, the
// two states of 1/4 after the first vote and the two of 1/8 after the
// second are set aside, 3/4 in all (rivals.go:348, `lost > pr.maxLoss`).
func TestLawLossAtExactlyTheCap(t *testing.T) {
	pr := programme{k: 2, p: 0.5, q0: 0.25, q: 0.25, others: 1,
		stop: lawStopMany, prune: 0.3, maxLoss: 0.75, budget: MaxLawWork}
	l, err := pr.run()
	require.NoError(t, err)
	assert.Equal(t, 6, l.updates) // 3 from the first state, 3 from the one kept
	pr.maxLoss = math.Nextafter(0.75, 0)
	_, err = pr.run()
	require.ErrorIs(t, err, ErrTooCostly)
	assert.ErrorContains(t, err, "of probability in states below")
}
