package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func draws(l Latency, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = l.draw(newStream(9, domainSample, uint64(i), 0, 0))
	}
	slices.Sort(out)
	return out
}

func TestLatencyDistributions(t *testing.T) {
	assert.Equal(t, time.Duration(0), Latency{}.draw(newStream(1, 1, 1, 1, 1)))
	assert.Equal(t, 3*time.Second, FixedLatency(3*time.Second).draw(newStream(1, 1, 1, 1, 1)))

	u := draws(UniformLatency(100*time.Millisecond, 200*time.Millisecond), 10000)
	assert.GreaterOrEqual(t, u[0], 100*time.Millisecond)
	assert.LessOrEqual(t, u[len(u)-1], 200*time.Millisecond)
	assert.InDelta(t, float64(150*time.Millisecond), float64(u[len(u)/2]), float64(5*time.Millisecond))

	ln := draws(LognormalLatency(time.Second, 0.5), 10000)
	assert.InDelta(t, float64(time.Second), float64(ln[len(ln)/2]), float64(50*time.Millisecond), "median")
	assert.Greater(t, ln[len(ln)-1], 3*time.Second, "a long tail")

	capped := LognormalLatency(time.Second, 2).Capped(2 * time.Second)
	c := draws(capped, 10000)
	assert.Equal(t, 2*time.Second, c[len(c)-1])

	assert.Equal(t, time.Second, draws(LognormalLatency(time.Second, 0), 3)[1], "sigma 0 is fixed at the median")
}

func TestStreamSlotsIndependent(t *testing.T) {
	// Neighbouring seeds and slots give unrelated draws.
	var prev float64 = -1
	same := 0
	for i := range 1000 {
		v := newStream(0, domainSample, 0, uint64(i), 0).unit(slotCorrect)
		if v == prev {
			same++
		}
		prev = v
		assert.GreaterOrEqual(t, v, 0.0)
		assert.Less(t, v, 1.0)
	}
	assert.Zero(t, same)
	st := newStream(0, domainSample, 0, 0, 0)
	assert.NotEqual(t, st.unit(slotCorrect), st.unit(slotVariant))
	assert.Equal(t, st.unit(slotCorrect), st.unit(slotCorrect), "a slot is a value, not a draw from shared state")
}

// TestLatencyOfFlags: no median and no spread is no latency; a median
// alone is fixed; a spread makes it lognormal, even without a median, so
// that Validate refuses that.
func TestLatencyOfFlags(t *testing.T) {
	assert.Equal(t, Latency{}, LatencyOf(0, 0))
	assert.Equal(t, FixedLatency(time.Second), LatencyOf(time.Second, 0))
	assert.Equal(t, LognormalLatency(time.Second, 0.5), LatencyOf(time.Second, 0.5))
	c := DefaultConfig()
	c.Latency = LatencyOf(0, 0.5)
	assert.ErrorContains(t, c.Validate(), "Latency.Median")
}
