package maker_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdaptiveKEarlyStepsDoNotLock: the start of issue 34's seed 5294 (a
// first step at k = 30, 33 of 37 right, then a step the model split, 12
// of 24), then steady steps at p 0.9. The old plan took a design effect
// of 9.02 from the two steps, fell to a bound of 0.52, charged a step
// 1.57 times the whole budget and ran every later step at k = 30. Now,
// after every step, the ledger holds at most the budget, and once the
// steady steps have spoken k is back near the k_min of p 0.9 (6 for 4,095
// steps). Only Observe and Next are used, so the same test runs against
// the old code (main at 571b620): there it fails at step 3, a step over
// budget.
func TestAdaptiveKEarlyStepsDoNotLock(t *testing.T) {
	a, err := maker.AdaptiveK{Target: 0.95, Steps: 4095}.WithDefaults()
	require.NoError(t, err)
	var st maker.KState
	st.Source = maker.SourceCorrectness
	rng := rand.New(rand.NewPCG(1, 2))
	k := 0
	for i := range 300 {
		k, _, _ = a.Next(i, st)
		x, n := 0, 0
		switch i {
		case 0:
			x, n = 33, 37
		case 1:
			x, n = 12, 24
		default:
			// A race at margin k against one rival at p 0.9.
			for lead := 0; lead < k && lead > -k; n++ {
				if rng.Float64() < 0.9 {
					x++
					lead++
				} else {
					lead--
				}
			}
		}
		a.Observe(&st, i, k, x, n)
		require.LessOrEqual(t, st.Spent, 1-a.Target+1e-12, "step %d: the ledger within the budget", i)
		require.Zero(t, st.OverBudget, "step %d", i)
	}
	assert.LessOrEqual(t, k, 9, "k at step 300: back near k_min, not locked at Max")
}

// TestSpreadFitRecoversTheSpread: steps whose p is drawn from a Beta of
// mean 0.9 and correlation 0.1, each a race at margin 5 (stopped on its
// votes), 2,000 of them: the fitted mean and spread are within a few
// standard errors of the truth, and the plan's failure at k is above the
// plain binomial's at the mean (the convexity the spread brings). With
// no spread the fitted spread is near 0.
func TestSpreadFitRecoversTheSpread(t *testing.T) {
	for _, c := range []struct {
		rho        float64
		lo, hi     float64 // the fitted rho's range
		muTol      float64
		wantConvex bool
	}{
		{0.1, 0.06, 0.15, 0.01, true},
		{0, 0, 0.01, 0.005, false},
	} {
		a, err := maker.AdaptiveK{Target: 0.95, Steps: 1 << 20, Window: 500}.WithDefaults()
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(3, uint64(c.rho*1000)))
		var st maker.KState
		st.Source = maker.SourceCorrectness
		for i := range 2000 {
			p := 0.9
			if c.rho > 0 {
				s := 1/c.rho - 1
				p = betaDraw(rng, 0.9*s, 0.1*s)
			}
			x, n, lead := 0, 0, 0
			for lead < 5 && lead > -5 && n < 400 {
				n++
				if rng.Float64() < p {
					x++
					lead++
				} else {
					lead--
				}
			}
			a.Observe(&st, i, 5, x, n)
		}
		require.NotNil(t, st.Fit)
		assert.InDelta(t, 0.9, st.Fit.P, c.muTol, "rho %g: the mean", c.rho)
		assert.GreaterOrEqual(t, st.Fit.Rho, c.lo, "rho %g", c.rho)
		assert.LessOrEqual(t, st.Fit.Rho, c.hi, "rho %g", c.rho)
		e := a.Estimate(maker.Report{KAuto: &st})
		k, fail, _ := a.Next(2000, st)
		ratio := fail / maker.StepFailure(e.Planning, k)
		t.Logf("rho %g: fitted p %.4f (plan %.4f) rho %.4f; k %d, planned failure %.3g, %.2f times the binomial's at the plan's p", c.rho, st.Fit.P, e.Planning, st.Fit.Rho, k, fail, ratio)
		if c.wantConvex {
			assert.Greater(t, ratio, 10.0, "rho %g: the spread raises the planned failure", c.rho)
		} else {
			assert.Less(t, ratio, 3.0, "no spread: near the binomial at the bound")
			assert.GreaterOrEqual(t, ratio, 1-1e-9)
		}
	}
}

// betaDraw draws from Beta(a, b) by two gamma draws (Marsaglia-Tsang).
func betaDraw(rng *rand.Rand, a, b float64) float64 {
	x, y := gammaDraw(rng, a), gammaDraw(rng, b)
	return x / (x + y)
}

func gammaDraw(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		return gammaDraw(rng, a+1) * math.Pow(rng.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
