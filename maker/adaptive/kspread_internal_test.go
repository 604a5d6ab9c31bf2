package adaptive

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSpreadFitRecoversTheSpread: steps whose p is drawn from a Beta of
// mean 0.9 and correlation 0.1, each a race at margin 5 (stopped on its
// votes), 2,000 of them: the fitted mean and spread are near the truth,
// and the plan's failure at k is far above the binomial's at the plan's
// p (the convexity the spread brings). With no spread the fitted spread
// is near 0 and the plan near the binomial. Broken on purpose (the plan
// integrating at no spread whatever the fit) the first case fails: a
// ratio of 1.
func TestSpreadFitRecoversTheSpread(t *testing.T) {
	for _, c := range []struct {
		rho        float64
		lo, hi     float64 // the fitted rho's range
		wantConvex bool
	}{
		{0.1, 0.06, 0.15, true},
		{0, 0, 0.01, false},
	} {
		rng := rand.New(rand.NewPCG(3, uint64(c.rho*1000)))
		var tally SpreadTally
		for range 2000 {
			p := 0.9
			if c.rho > 0 {
				s := 1/c.rho - 1
				p = testBeta(rng, 0.9*s, 0.1*s)
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
			tally.Add(x, n, 1)
		}
		fit := fitSpread(tally, 2000, 4, 30, 0.975)
		assert.InDelta(t, 0.9, fit.P, 0.01, "rho %g: the mean", c.rho)
		assert.GreaterOrEqual(t, fit.Rho, c.lo, "rho %g", c.rho)
		assert.LessOrEqual(t, fit.Rho, c.hi, "rho %g", c.rho)
		k := 12
		ratio := fit.failAt(4, k) / StepFailure(fit.PLow, k)
		t.Logf("rho %g: fitted p %.4f (plan %.4f) rho %.4f (plan %.4f); at k %d the planned failure is %.3g, %.3g times the binomial's at the plan's p", c.rho, fit.P, fit.PLow, fit.Rho, fit.PlanRho, k, fit.failAt(4, k), ratio)
		if c.wantConvex {
			assert.Greater(t, ratio, 10.0, "rho %g: the spread raises the planned failure", c.rho)
		} else {
			assert.InDelta(t, 1, ratio, 1e-9, "no spread shown: the binomial at the plan's p")
		}
	}
}

// testBeta draws from Beta(a, b) by two gamma draws (Marsaglia-Tsang).
func testBeta(rng *rand.Rand, a, b float64) float64 {
	x, y := testGamma(rng, a), testGamma(rng, b)
	return x / (x + y)
}

func testGamma(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		return testGamma(rng, a+1) * math.Pow(rng.Float64(), 1/a)
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
		if math.Log(rng.Float64()) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
