package cluster

import (
	"log/slog"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFisherTail(t *testing.T) {
	t.Parallel()
	// All 5 losses among the worker's 5 of 10 answers: 1/C(10,5).
	assert.InDelta(t, 1.0/252, fisherTail(10, 5, 5, 5), 1e-15)
	// Both of 2 losses among 3 of 6: C(2,2)C(4,1)/C(6,3) = 4/20.
	assert.InDelta(t, 0.2, fisherTail(6, 2, 3, 2), 1e-12)
	// At or below the expected losses: 1, never below the true tail.
	assert.Equal(t, 1.0, fisherTail(6, 2, 3, 1))
	assert.Equal(t, 1.0, fisherTail(100, 0, 10, 0))
	// A large run: the sum stops early and stays a probability.
	p := fisherTail(3_000_000, 300_000, 1_000_000, 100_500)
	assert.True(t, p > 0 && p < 0.5, "%v", p)
}

// TestBookQuarantinesOnlyTheLoser: three workers whose answers lose at
// the same rate (0.3, a weak model) over 1,000 steps are never
// quarantined; a fourth whose answers always lose is, within 20 steps.
func TestBookQuarantinesOnlyTheLoser(t *testing.T) {
	t.Parallel()
	for _, liar := range []bool{false, true} {
		b, bl := newBook(slog.New(slog.DiscardHandler)), newBallot()
		rng := rand.New(rand.NewPCG(1, 2))
		ids := []string{"A", "B", "C"}
		if liar {
			ids = append(ids, "L")
		}
		const winner = 7
		var caught int
		for step := range 1000 {
			for _, id := range ids {
				for range 3 {
					key := uint64(winner)
					if id == "L" || rng.Float64() < 0.3 {
						key = 8 + uint64(rng.IntN(4))
					}
					b.sample(bl, maker.SampleEvent{Step: step, Worker: id, Key: key})
				}
			}
			b.decided(bl, step, strconv.FormatUint(winner, 16))
			if caught == 0 && len(b.list()) > 0 {
				caught = step + 1
			}
		}
		b.sample(bl, maker.SampleEvent{Step: 999, Worker: "A", Key: 9}) // late: after its step was decided

		assert.Empty(t, bl.votes, "nothing kept of decided steps")
		q := b.list()
		if !liar {
			assert.Empty(t, q, "honest workers quarantined")
			continue
		}
		require.Len(t, q, 1)
		assert.Equal(t, "L", q[0].Identity)
		assert.LessOrEqual(t, caught, 20)
		h := b.headers(nil, 1000, false)
		assert.Equal(t, "L", h.Get(excludeHeader))
		assert.False(t, keeps(h, "L", 99), "a quarantined worker never gets the job")
		assert.True(t, keeps(h, "A", 1))
	}
}

// TestBookKeepsRunsApart: a Drawer watching several runs at once (a
// batch's tasks) settles each run's answers against its own winners,
// though their steps share numbers. Here A answers only run 1 and B only
// run 2, each always with its run's winner, step after step: neither is
// quarantined. Settled against the other run's winners (one ballot for
// both), B's answers would all lose and B would be quarantined. A liar
// answering run 2 beside B is, and its quarantine spans both runs.
func TestBookKeepsRunsApart(t *testing.T) {
	t.Parallel()
	b := newBook(slog.New(slog.DiscardHandler))
	run1, run2 := newBallot(), newBallot()
	for step := range 100 {
		for range 3 {
			b.sample(run1, maker.SampleEvent{Step: step, Worker: "A", Key: 7})
			b.sample(run2, maker.SampleEvent{Step: step, Worker: "B", Key: 9})
		}
		b.decided(run1, step, "7")
		b.decided(run2, step, "9")
	}
	assert.Empty(t, b.list(), "honest workers of two runs quarantined")
	for step := 100; step < 200 && len(b.list()) == 0; step++ {
		for range 3 {
			b.sample(run2, maker.SampleEvent{Step: step, Worker: "B", Key: 9})
			b.sample(run2, maker.SampleEvent{Step: step, Worker: "L", Key: 10})
		}
		b.decided(run2, step, "9")
	}
	q := b.list()
	require.Len(t, q, 1)
	assert.Equal(t, "L", q[0].Identity)
	assert.False(t, keeps(b.headers(nil, 0, false), "L", 99), "no job of any run goes to it")
	assert.Empty(t, run1.votes)
	assert.Empty(t, run2.votes)
}

// TestBookSpreadsAStep: an identity that answered more of a step than
// the least used one is avoided for that step's next jobs, for the first
// deliveries only.
func TestBookSpreadsAStep(t *testing.T) {
	t.Parallel()
	b := newBook(slog.New(slog.DiscardHandler))
	b.answered(4, "A", "a")
	b.answered(4, "A", "a")
	b.answered(4, "B", "b")
	b.answered(5, "B", "b")
	assert.Empty(t, b.headers(nil, 4, false).Get(avoidHeader), "a Drawer that does not spread avoids nobody")
	h := b.headers(nats.Header{}, 4, true)
	assert.Equal(t, "A", h.Get(avoidHeader), "A answered step 4 twice, B once")
	assert.False(t, keeps(h, "A", 1))
	assert.True(t, keeps(h, "A", avoidDeliveries+1), "soft: a later delivery goes to A too")
	assert.True(t, keeps(h, "B", 1))
	assert.Empty(t, b.headers(nil, 6, true).Get(avoidHeader), "nobody answered step 6")
	b.answered(6, "C", "c")
	assert.Equal(t, "A B", b.headers(nil, 4, true).Get(avoidHeader), "C, known now, answered none of step 4")
}
