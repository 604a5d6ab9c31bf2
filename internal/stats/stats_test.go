package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestClopperPearsonKnownValues: published exact 95% intervals (to four
// decimals) and the closed forms at the edges.
func TestClopperPearsonKnownValues(t *testing.T) {
	for _, c := range []struct{ x, n, lo, hi float64 }{
		{0, 10, 0, 0.3085},
		{10, 10, 0.6915, 1},
		{5, 10, 0.1871, 0.8129},
		{3, 20, 0.0321, 0.3789},
	} {
		lo, hi := ClopperPearson(c.x, c.n, 0.95)
		assert.InDelta(t, c.lo, lo, 5e-5, "%v of %v", c.x, c.n)
		assert.InDelta(t, c.hi, hi, 5e-5, "%v of %v", c.x, c.n)
	}
	// x = n gives (α/2)^(1/n); x = 0 gives 1 - (α/2)^(1/n).
	lo, _ := ClopperPearson(1000, 1000, 0.95)
	assert.InDelta(t, math.Pow(0.025, 1.0/1000), lo, 1e-10)
	_, hi := ClopperPearson(0, 1000, 0.95)
	assert.InDelta(t, 1-math.Pow(0.025, 1.0/1000), hi, 1e-10)
	lo, hi = ClopperPearson(0, 0, 0.95)
	assert.Equal(t, [2]float64{0, 1}, [2]float64{lo, hi}, "no trials: no knowledge")
	// Large counts: the interval shrinks like the normal one, 1.96 sd.
	lo, hi = ClopperPearson(99000, 100000, 0.95)
	sd := math.Sqrt(0.99 * 0.01 / 100000)
	assert.InDelta(t, 2*1.96*sd, hi-lo, 0.02*2*1.96*sd)
	// Out of range counts are clamped.
	assert.Equal(t, 1.0, UpperBound(7, 5, 0.95))
	assert.Equal(t, 0.0, LowerBound(-1, 5, 0.95))
	assert.Equal(t, UpperBound(0, 5, 0.95), UpperBound(-3, 5, 0.95))
}

// TestBoundsInvertTheBinomial: over a grid of whole counts the one-sided
// bounds are where gonum's binomial distribution function (computed
// forwards, not by the inversion under test) has the tail 1 - c: P(X <=
// x) at the upper bound, P(X >= x) at the lower. Broken on purpose
// (UpperBound at the quantile c of Beta(x, n-x+1)), it fails here.
func TestBoundsInvertTheBinomial(t *testing.T) {
	for _, c := range []float64{0.9, 0.95, 0.99} {
		for _, n := range []int{1, 7, 59, 100, 200, 1000} {
			for _, x := range []int{0, 1, 2, 5, n / 3, n - 1} {
				if x < 0 || x >= n {
					continue
				}
				up := UpperBound(float64(x), float64(n), c)
				tail := distuv.Binomial{N: float64(n), P: up}.CDF(float64(x))
				assert.InDelta(t, 1-c, tail, 1e-9, "upper, %d of %d at %g", x, n, c)
				if x > 0 {
					lo := LowerBound(float64(x), float64(n), c)
					tail := 1 - distuv.Binomial{N: float64(n), P: lo}.CDF(float64(x-1))
					assert.InDelta(t, 1-c, tail, 1e-9, "lower, %d of %d at %g", x, n, c)
				}
				// The two-sided interval at c is the one-sided bounds at (1+c)/2.
				l2, u2 := ClopperPearson(float64(x), float64(n), 2*c-1)
				assert.InDelta(t, up, u2, 1e-12)
				assert.InDelta(t, LowerBound(float64(x), float64(n), c), l2, 1e-12)
			}
		}
	}
}

// TestBetaCDFKnownValues: Beta(2, 3) (mean 0.4, correlation 1/6) at 1/2
// is 11/16; Beta(1, 1) (mean 1/2, correlation 1/3) is the uniform.
func TestBetaCDFKnownValues(t *testing.T) {
	a, b := BetaShape(0.4, 1.0/6)
	assert.InDelta(t, 2, a, 1e-12)
	assert.InDelta(t, 3, b, 1e-12)
	assert.InDelta(t, 11.0/16, BetaCDF(0.5, 0.4, 1.0/6), 1e-12)
	for _, p := range []float64{0.1, 0.37, 0.9} {
		assert.InDelta(t, p, BetaCDF(p, 0.5, 1.0/3), 1e-12)
	}
	assert.Equal(t, 0.0, BetaCDF(0, 0.5, 0.2))
	assert.Equal(t, 0.0, BetaCDF(-1, 0.5, 0.2))
	assert.Equal(t, 1.0, BetaCDF(1, 0.5, 0.2))
}

// TestBetaBinomialIsADistribution: with the binomial coefficient put
// back, BetaBinomialLog's probabilities are gonum's beta-binomial pmf
// (C(n,x)·B(x+α, n-x+β)/B(α, β), by mathext.Lbeta) and sum to 1; at
// rho 0 they are the binomial's.
func TestBetaBinomialIsADistribution(t *testing.T) {
	const n = 12
	for _, c := range []struct{ mu, rho float64 }{{0.9, 0.1}, {0.3, 0.5}, {0.99, 0.01}, {0.7, 0}} {
		sum := 0.0
		for x := 0; x <= n; x++ {
			lc := lchoose(n, x)
			got := lc + BetaBinomialLog(x, n, c.mu, c.rho)
			var want float64
			if c.rho == 0 {
				want = math.Log(distuv.Binomial{N: n, P: c.mu}.Prob(float64(x)))
			} else {
				a, b := BetaShape(c.mu, c.rho)
				want = lc + mathext.Lbeta(float64(x)+a, float64(n-x)+b) - mathext.Lbeta(a, b)
			}
			assert.InDelta(t, want, got, 1e-9, "%d of %d at %+v", x, n, c)
			sum += math.Exp(got)
		}
		assert.InDelta(t, 1, sum, 1e-12, "%+v", c)
	}
}

func lchoose(n, x int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(x + 1))
	c, _ := math.Lgamma(float64(n - x + 1))
	return a - b - c
}

// TestTallyIsTheSumOfItsClusters: the tally's log-likelihood (its
// sufficient statistics) is the sum of its clusters' BetaBinomialLog, a
// cluster added w times counts w times, and Slope is LogLik's derivative.
// Broken on purpose (Size's sum without its last term), it fails here.
func TestTallyIsTheSumOfItsClusters(t *testing.T) {
	clusters := []struct{ x, n, w int }{{5, 5, 3}, {4, 6, 1}, {0, 3, 2}, {70, 80, 1}, {1, 1, 4}}
	var tally Tally
	for _, c := range clusters {
		tally.Add(c.x, c.n, c.w)
	}
	var x, n float64
	for _, c := range clusters {
		x += float64(c.x * c.w)
		n += float64(c.n * c.w)
	}
	assert.Equal(t, x, tally.Successes())
	assert.Equal(t, n, tally.Trials())
	for _, mu := range []float64{0.2, 0.75, 0.999} {
		for _, rho := range []float64{0, 1e-6, 0.05, 0.6} {
			want := 0.0
			for _, c := range clusters {
				want += float64(c.w) * BetaBinomialLog(c.x, c.n, mu, rho)
			}
			assert.InDelta(t, want, tally.LogLik(mu, rho), 1e-9*math.Abs(want), "mu %g rho %g", mu, rho)
			const h = 1e-6
			num := (tally.LogLik(mu+h, rho) - tally.LogLik(mu-h, rho)) / (2 * h)
			assert.InDelta(t, num, tally.Slope(mu, rho), 1e-4*math.Max(1, math.Abs(num)), "slope at mu %g rho %g", mu, rho)
		}
	}
	var small Tally
	small.Add(2, 3, 1)
	small.Add(0, 1, 2)
	assert.Equal(t, Tally{Right: []int{1, 1}, Wrong: []int{3}, Size: []int{3, 1, 1}}, small, "counts of clusters with more than j")
	c := tally.Clone()
	c.Add(1, 2, 1)
	assert.NotEqual(t, c, tally, "a clone shares nothing")
	assert.Equal(t, x, tally.Successes())
}

// TestMuHatAndMuLow: at rho 0 the likelihood's maximum is the pooled
// share; MuLow is where the likelihood has fallen to the threshold.
func TestMuHatAndMuLow(t *testing.T) {
	var tally Tally
	tally.Add(8, 10, 5)
	tally.Add(3, 10, 5)
	assert.InDelta(t, 0.55, tally.MuHat(0), 1e-9)
	for _, rho := range []float64{0, 0.2} {
		top := tally.MuHat(rho)
		best := tally.LogLik(top, rho)
		for _, mu := range []float64{top - 0.01, top + 0.01} {
			assert.Less(t, tally.LogLik(mu, rho), best, "rho %g: the maximum", rho)
		}
		thr := best - 2
		low := tally.MuLow(rho, top, thr)
		assert.Less(t, low, top)
		assert.InDelta(t, thr, tally.LogLik(low, rho), 1e-6, "rho %g", rho)
		assert.LessOrEqual(t, tally.LogLik(low, rho), thr, "rounded outwards")
	}
	// A likelihood that rises to the edge: the edge.
	var all Tally
	all.Add(10, 10, 3)
	assert.Equal(t, Logistic(30), all.MuHat(0))
}

// TestWilsonKnownValues: the two-sided 95% Wilson interval of 50/100 is
// [0.4038, 0.5962] (its lower end the one-sided 97.5% bound); a
// unanimous share's lower bound is n/(n+z²); the quantile is the
// normal's.
func TestWilsonKnownValues(t *testing.T) {
	assert.InDelta(t, 1.959963984540054, NormalQuantile(0.975), 1e-12)
	z := 1.6448536269514722 // the normal quantile of 0.95
	assert.InDelta(t, z, NormalQuantile(0.95), 1e-12)
	assert.InDelta(t, 30/(30+z*z), WilsonLower(1, 30, 0.95), 1e-12, "unanimous: n/(n+z²)")
	lo, hi := Wilson(0.5, 100, NormalQuantile(0.975))
	assert.InDelta(t, 0.4038, lo, 5e-5)
	assert.InDelta(t, 0.5962, hi, 5e-5)
	assert.InDelta(t, lo, WilsonLower(0.5, 100, 0.975), 1e-15)
	assert.Zero(t, WilsonLower(0, 0, 0.95))
	assert.Zero(t, WilsonLower(0, 10, 0.95))
	assert.Less(t, WilsonLower(0.99, 100, 0.95), 0.99, "a lower bound")
	lo, hi = Wilson(0, 10, 1.96)
	assert.Zero(t, lo)
	assert.Less(t, hi, 0.35)
	lo, hi = Wilson(1, 10, 1.96)
	assert.Equal(t, 1.0, hi)
	assert.Greater(t, lo, 0.65)
	lo, hi = Wilson(0.3, 0, 1.96)
	assert.Equal(t, [2]float64{0, 1}, [2]float64{lo, hi}, "no trials: no knowledge")
}

// TestBinomialTailIsTheSumOfItsTerms: BinomialTail equals the tail summed
// term by term in log space, relatively, down to tails far below 1e-9
// (the red-flag alarm's level), and is 1 and 0 past its ends.
func TestBinomialTailIsTheSumOfItsTerms(t *testing.T) {
	for _, c := range []struct {
		x, n int
		p    float64
	}{{1, 1, 0.5}, {3, 10, 0.1}, {12, 20, 0.05}, {40, 50, 0.02}, {99, 100, 0.5}, {5, 1000, 0.003}} {
		sum := 0.0
		for i := c.x; i <= c.n; i++ {
			sum += math.Exp(lchoose(c.n, i) + float64(i)*math.Log(c.p) + float64(c.n-i)*math.Log1p(-c.p))
		}
		assert.InEpsilon(t, sum, BinomialTail(c.x, c.n, c.p), 1e-9, "%+v", c)
	}
	assert.Less(t, BinomialTail(40, 50, 0.02), 1e-40)
	assert.Equal(t, 1.0, BinomialTail(0, 10, 0.3))
	assert.Equal(t, 0.0, BinomialTail(11, 10, 0.3))
}
