package laws

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const hanoiSteps = 1<<20 - 1 // 20 disks: 1,048,575 moves

func TestKMinPaperTable(t *testing.T) {
	for p, want := range map[float64]int{0.9978: 3, 0.6429: 29} {
		k, err := KMin(hanoiSteps, p, 0.95)
		require.NoError(t, err)
		assert.Equal(t, want, k, "p = %v", p)
		assert.GreaterOrEqual(t, PFull(hanoiSteps, k, p), 0.95)
		assert.Less(t, PFull(hanoiSteps, k-1, p), 0.95)
	}
}

func TestKMinIsTheSmallestSafeMargin(t *testing.T) {
	steps := []int{1, 2, 10, 1000, hanoiSteps, 1e9}
	ps := []float64{0.51, 0.55, 0.6, 0.6429, 0.7, 0.8, 0.9, 0.99, 0.9978, 0.999999}
	targets := []float64{0.01, 0.5, 0.9, 0.95, 0.999, 1 - 1e-9}
	for _, s := range steps {
		for _, p := range ps {
			prev := 0
			for _, tgt := range targets { // increasing
				k, err := KMin(s, p, tgt)
				require.NoError(t, err, "s=%d p=%v t=%v", s, p, tgt)
				require.GreaterOrEqual(t, PFull(s, k, p), tgt, "s=%d p=%v t=%v k=%d", s, p, tgt, k)
				if k > 1 {
					require.Less(t, PFull(s, k-1, p), tgt, "s=%d p=%v t=%v k=%d", s, p, tgt, k)
				}
				require.GreaterOrEqual(t, k, prev, "k_min grows with the target")
				prev = k
				// Where the naive closed form is accurate, it agrees.
				if s <= 1000 && tgt <= 0.999 {
					naive := math.Ceil(math.Log(math.Pow(tgt, -1/float64(s))-1) / math.Log((1-p)/p))
					require.Equal(t, max(1, int(naive)), k, "s=%d p=%v t=%v", s, p, tgt)
				}
			}
		}
	}
	// Growth is logarithmic in the number of steps: each factor of 1000
	// adds about ln(1000)/ln(1/r) to k_min.
	p := 0.9
	k3, _ := KMin(1e3, p, 0.95)
	k6, _ := KMin(1e6, p, 0.95)
	k9, _ := KMin(1e9, p, 0.95)
	step := math.Log(1000) / math.Log(p/(1-p))
	assert.InDelta(t, step, float64(k6-k3), 1)
	assert.InDelta(t, step, float64(k9-k6), 1)
}

func TestKMinTargetNearOne(t *testing.T) {
	// t^(-1/s) - 1 is 1e-18 here: computed naively it rounds to 0.
	naive := math.Pow(1-1e-12, -1.0/1e6) - 1
	require.Zero(t, naive, "the naive form underflows (else this test proves nothing)")
	k, err := KMin(1e6, 0.9, 1-1e-12)
	require.NoError(t, err)
	// ln(1e-18) / ln(1/9) = 18.86...
	assert.Equal(t, 19, k)
	assert.GreaterOrEqual(t, PFull(1e6, 19, 0.9), 1-1e-12)
}

func TestKMinEdges(t *testing.T) {
	k, err := KMin(hanoiSteps, 1, 0.999999)
	require.NoError(t, err)
	assert.Equal(t, 1, k, "p = 1 needs no margin")
	k, err = KMin(1, 0.9, 0.5)
	require.NoError(t, err)
	assert.Equal(t, 1, k, "one vote meets the target")
	for _, c := range []struct {
		s    int
		p, t float64
	}{
		{0, 0.9, 0.95}, {-1, 0.9, 0.95},
		{10, 0.5, 0.95}, {10, 0.3, 0.95}, {10, 1.1, 0.95}, {10, math.NaN(), 0.95},
		{10, 0.9, 0}, {10, 0.9, 1}, {10, 0.9, -0.1}, {10, 0.9, math.NaN()},
		{1e6, 0.5 + 1e-12, 0.95}, // k_min around 4e12
	} {
		_, err := KMin(c.s, c.p, c.t)
		assert.ErrorIs(t, err, ErrOutOfRange, "%+v", c)
	}
}

func TestPStepAndPFull(t *testing.T) {
	assert.InDelta(t, 0.7, PStep(0.7, 1), 1e-15)
	assert.Equal(t, 0.5, PStep(0.5, 7))
	assert.Equal(t, 1.0, PStep(1, 3))
	assert.Equal(t, 0.0, PStep(0, 3))
	// 1/(1 + (1/9)^3) = 729/730
	assert.InDelta(t, 729.0/730, PStep(0.9, 3), 1e-15)
	for _, p := range []float64{0.55, 0.7, 0.9} {
		for _, k := range []int{1, 2, 5} {
			for _, s := range []int{1, 7, 100} {
				want := math.Pow(PStep(p, k), float64(s))
				assert.InEpsilon(t, want, PFull(s, k, p), 1e-12, "s=%d k=%d p=%v", s, k, p)
			}
		}
	}
	assert.Equal(t, 1.0, PFull(0, 3, 0.6))
	assert.Equal(t, 0.0, PFull(5, 3, 0))
	assert.Equal(t, 1.0, PFull(hanoiSteps, 3, 1))
	// A million steps and r^k near 1e-15, below machine epsilon:
	// 1 - PFull ~ s * r^k. (1+r^k)^-s through math.Pow is off by ~10%.
	p, k, s := 0.999, 5, 1_000_000
	rk := math.Pow((1-p)/p, float64(k))
	assert.InEpsilon(t, float64(s)*rk, 1-PFull(s, k, p), 1e-6)
	naive := 1 - math.Pow(1+rk, -float64(s))
	assert.Greater(t, math.Abs(naive/(float64(s)*rk)-1), 0.01, "the naive form is off (else this proves nothing)")
	for _, bad := range []float64{PStep(-0.1, 3), PStep(1.1, 3), PStep(math.NaN(), 3), PStep(0.9, 0),
		PFull(-1, 3, 0.9), PFull(5, 0, 0.9), PFull(5, 3, 2)} {
		assert.True(t, math.IsNaN(bad))
	}
}

func TestExpectedSamples(t *testing.T) {
	for _, p := range []float64{0, 0.3, 0.5, 0.51, 0.7, 0.9, 0.999, 1} {
		assert.Equal(t, 1.0, ExpectedSamples(p, 1), "p=%v: one vote decides", p)
	}
	for _, k := range []int{1, 2, 3, 10} {
		kf := float64(k)
		assert.Equal(t, kf*kf, ExpectedSamples(0.5, k), "symmetric walk: k²")
		assert.InEpsilon(t, kf*kf, ExpectedSamples(0.5+1e-12, k), 1e-9, "continuous at 1/2")
		assert.Equal(t, kf, ExpectedSamples(1, k))
		for _, p := range []float64{0.55, 0.6429, 0.7, 0.9, 0.9978} {
			// The paper's form, accurate away from p = 1/2.
			r := (1 - p) / p
			rk := math.Pow(r, kf)
			want := kf / (2*p - 1) * (1 - rk) / (1 + rk)
			assert.InEpsilon(t, want, ExpectedSamples(p, k), 1e-12, "p=%v k=%d", p, k)
			assert.InEpsilon(t, want, ExpectedSamples(1-p, k), 1e-12, "symmetric in p and 1-p")
		}
	}
	assert.True(t, math.IsNaN(ExpectedSamples(0.9, 0)))
	assert.True(t, math.IsNaN(ExpectedSamples(1.5, 3)))
}

// TestExpectedSamplesMonteCarlo checks the formula against a plain random
// walk, independently of the race code, at p near 1/2 where the closed form
// has to be evaluated carefully.
func TestExpectedSamplesMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		p float64
		k int
	}{{0.5, 3}, {0.52, 4}, {0.6, 6}} {
		const trials = 40_000
		total := 0
		for range trials {
			pos := 0
			for pos > -c.k && pos < c.k {
				if rng.Float64() < c.p {
					pos++
				} else {
					pos--
				}
				total++
			}
		}
		mean := float64(total) / trials
		assert.InEpsilon(t, ExpectedSamples(c.p, c.k), mean, 0.02, "p=%v k=%d", c.p, c.k)
	}
}

func TestExpectedCost(t *testing.T) {
	cost, err := ExpectedCost(0.9, 3, 0.8, 0.002)
	require.NoError(t, err)
	assert.InEpsilon(t, ExpectedSamples(0.9, 3)/0.8*0.002, cost, 1e-15)
	cost, err = ExpectedCost(1, 3, 1, 0)
	require.NoError(t, err)
	assert.Zero(t, cost)
	for _, c := range []struct {
		p        float64
		k        int
		v, price float64
	}{
		{-0.1, 3, 1, 1}, {1.1, 3, 1, 1}, {math.NaN(), 3, 1, 1}, {0.9, 0, 1, 1},
		{0.9, 3, 0, 1}, {0.9, 3, 1.5, 1}, {0.9, 3, math.NaN(), 1},
		{0.9, 3, 1, -1}, {0.9, 3, 1, math.Inf(1)}, {0.9, 3, 1, math.NaN()},
	} {
		_, err := ExpectedCost(c.p, c.k, c.v, c.price)
		assert.ErrorIs(t, err, ErrOutOfRange, "%+v", c)
	}
}
