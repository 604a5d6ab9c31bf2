package laws

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
