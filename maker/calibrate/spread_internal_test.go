package calibrate

import (
	"testing"

	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/stretchr/testify/assert"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestFailuresOnIsTheBetaAverage: the spread's mean per-step failure on
// bins of p (the fit's 2,000 and the region's 500) is the integral of
// adaptive.StepFailure(p, k) against the Beta's density, computed apart by
// gonum's Gauss-Legendre quadrature, and PFull and kMin are read from it.
// Broken on purpose (the bins' midpoints taken on 2,000 bins whatever
// their number), the region's averages fail here.
func TestFailuresOnIsTheBetaAverage(t *testing.T) {
	t.Parallel()
	for _, s := range []Spread{{Mean: 0.9, ICC: 0.02}, {Mean: 0.8, ICC: 0.1}, {Mean: 0.97, ICC: 0}} {
		for _, n := range []int{bins, regionBins} {
			got := s.failuresOn(n, 6, 0)
			for k := 1; k <= 6; k++ {
				want := adaptive.StepFailure(s.Mean, k)
				if s.ICC > 0 {
					a, b := s.Mean*(1-s.ICC)/s.ICC, (1-s.Mean)*(1-s.ICC)/s.ICC
					beta := distuv.Beta{Alpha: a, Beta: b}
					want = quad.Fixed(func(p float64) float64 { return beta.Prob(p) * adaptive.StepFailure(p, k) }, 0, 1, 400, nil, 0)
				}
				assert.InDelta(t, want, got[k-1], 2e-3*want, "%+v on %d bins at k %d", s, n, k)
			}
		}
		f := s.failuresOn(bins, 6, 0)
		assert.InDelta(t, runSuccess(1000, f[4]), s.PFull(1000, 5), 1e-12)
		assert.Equal(t, smallestK(f, 10, 0.9), s.kMin(10, 0.9))
		assert.Equal(t, s.failuresOn(regionBins, 6, negligibleMass), s.failures(6))
	}
	assert.Zero(t, Spread{Mean: 0.5}.kMin(1, 0.1), "every step at p 1/2: no k helps")
}
