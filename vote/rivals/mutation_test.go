package rivals

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLawWorkCountsEachMove: the work a law with rivals is charged (what
// MaxWork caps) is one update per state and answer voted for with a
// probability above zero, and a budget of exactly that work is enough.
// At k = 1 the first vote decides: from the one state, a right vote, a
// vote for rival 0 and a vote for the other rivals (interchangeable, one
// update for all): 3 updates; at p = 0 no right vote: 2 (rivals/rivals.go:263,
// the right vote's `m > 0`; :264 and :277, the counts of the right vote
// and of rival 0's; :329, the budget's `work > pr.budget`).
func TestLawWorkCountsEachMove(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want int
	}{{0.5, 3}, {0, 2}} {
		l, err := raceLaw(c.p, 1, Spread{N: 5, Concentration: 0.2})
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
// (rivals/rivals.go:218, the choice of key; a cut state loses a rival's votes:
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
			stop: lawStopMany, prune: lawPrune, maxLoss: lawMaxLoss, budget: MaxWork}
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
// second are set aside, 3/4 in all (rivals/rivals.go:348, `lost > pr.maxLoss`).
func TestLawLossAtExactlyTheCap(t *testing.T) {
	pr := programme{k: 2, p: 0.5, q0: 0.25, q: 0.25, others: 1,
		stop: lawStopMany, prune: 0.3, maxLoss: 0.75, budget: MaxWork}
	l, err := pr.run()
	require.NoError(t, err)
	assert.Equal(t, 6, l.updates) // 3 from the first state, 3 from the one kept
	pr.maxLoss = math.Nextafter(0.75, 0)
	_, err = pr.run()
	require.ErrorIs(t, err, ErrTooCostly)
	assert.ErrorContains(t, err, "of probability in states below")
}
