package calibrate

import "math"

// The plan's uncertainty: a whole run's success depends on the mean p and
// on how much the steps differ (the spread's ICC), and the samples know
// both only to within a region. A spread the samples cannot detect is not
// zero: it is any ICC the region holds, and a large ICC with a small mean
// puts a tail of hard steps under the run. So k is planned for the worst
// point of the joint likelihood-ratio region of (mean, ICC), not at its
// centre.

// region is the joint likelihood-ratio confidence region of (mean, ICC)
// of the beta-binomial fit: the pairs whose log-likelihood is within
// chi2/2 of the maximum (chi2 the χ²₂ quantile of the confidence, Wilks).
// It is held as rows: for each ICC of a log grid (and 0), the interval of
// means in the region at that ICC.
type region struct {
	rows []regionRow
}

// regionRow is the region's slice at one ICC: means from low to high.
type regionRow struct{ icc, low, high float64 }

// chi2Two is the χ² quantile with 2 degrees of freedom at confidence c:
// -2 ln(1-c).
func chi2Two(c float64) float64 { return -2 * math.Log1p(-c) }

// iccGrid are the ICCs at which the region is sliced: 0 (steps alike),
// then a log grid from 1e-4 to 0.995, 16% apart; newRegion adds a slice
// at the region's largest ICC, found by bisection, where the hard-step
// tail is heaviest.
var iccGrid = func() []float64 {
	const n, lo, hi = 64, 1e-4, 0.995
	g := []float64{0}
	for i := range n {
		g = append(g, math.Exp(math.Log(lo)+(math.Log(hi)-math.Log(lo))*float64(i)/float64(n-1)))
	}
	return g
}()

// likICC is the ICC the likelihood is evaluated at for a grid ICC: 0 is
// the beta-binomial's binomial limit.
func likICC(icc float64) float64 { return math.Max(icc, minICC) }

// newRegion slices the region of the clusters at log-likelihood cut (the
// maximum less chi2/2): at each grid ICC, the largest likelihood over the
// mean (golden section on the logit), and where it reaches the cut, the
// two ends of the means that do (bisection).
func newRegion(cs []wcluster, cut float64) region {
	t := tallyOf(cs)
	x, n := t.Successes(), t.Trials()
	var r region
	if n == 0 {
		return r
	}
	clamp := func(m float64) float64 { return math.Min(1-muEdge, math.Max(muEdge, m)) }
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	inv := func(t float64) float64 { return clamp(1 / (1 + math.Exp(-t))) }
	ph := clamp(x / n)
	// slice returns the region's means at one ICC, ok false where the
	// likelihood nowhere reaches the cut.
	slice := func(icc float64) (row regionRow, ok bool) {
		ll := func(l float64) float64 { return t.LogLik(inv(l), likICC(icc)) }
		// The likelihood at one ICC is unimodal in the mean; its top lies
		// within a wide bracket of the pooled share's logit.
		a, b := math.Max(logit(muEdge), logit(ph)-12), math.Min(logit(1-muEdge), logit(ph)+12)
		g := (math.Sqrt(5) - 1) / 2
		x1, x2 := b-g*(b-a), a+g*(b-a)
		f1, f2 := ll(x1), ll(x2)
		for range 40 {
			if f1 < f2 {
				a, x1, f1 = x1, x2, f2
				x2 = a + g*(b-a)
				f2 = ll(x2)
			} else {
				b, x2, f2 = x2, x1, f1
				x1 = b - g*(b-a)
				f1 = ll(x1)
			}
		}
		tTop, fTop := x1, f1
		if f2 > f1 {
			tTop, fTop = x2, f2
		}
		if e := logit(ph); ll(e) > fTop {
			tTop, fTop = e, ll(e)
		}
		if fTop < cut {
			return regionRow{}, false
		}
		end := func(far float64) float64 {
			if ll(far) >= cut {
				return inv(far)
			}
			in, out := tTop, far
			for range 30 {
				mid := (in + out) / 2
				if ll(mid) >= cut {
					in = mid
				} else {
					out = mid
				}
			}
			return inv(in)
		}
		lo, hi := end(logit(muEdge)), end(logit(1-muEdge))
		if x == 0 {
			lo = 0
		}
		if x == n {
			hi = 1
		}
		return regionRow{icc: icc, low: lo, high: hi}, true
	}
	last := -1
	for i, icc := range iccGrid {
		if row, ok := slice(icc); ok {
			r.rows = append(r.rows, row)
			last = i
		}
	}
	// The region's largest ICC lies between its last slice and the next
	// grid point (the profile likelihood falls on from there): bisect.
	if last >= 0 && last+1 < len(iccGrid) {
		in, out := math.Log(math.Max(iccGrid[last], minICC)), math.Log(iccGrid[last+1])
		var edge regionRow
		found := false
		for range 12 {
			mid := (in + out) / 2
			if row, ok := slice(math.Exp(mid)); ok {
				in, edge, found = mid, row, true
			} else {
				out = mid
			}
		}
		if found {
			r.rows = append(r.rows, edge)
		}
	}
	return r
}

// iccRange is the least and the largest ICC the region holds (on its
// grid); 0, 0 for an empty region.
func (r region) iccRange() (lo, hi float64) {
	if len(r.rows) == 0 {
		return 0, 0
	}
	return r.rows[0].icc, r.rows[len(r.rows)-1].icc
}

// failures returns the spread's mean per-step failure at each margin
// 1..kmax (index k-1) on the region's bins (failuresOn).
func (s Spread) failures(kmax int) []float64 {
	return s.failuresOn(regionBins, kmax, negligibleMass)
}

// bounds are the region's extreme per-step failures at each margin
// 1..kSearch (index k-1): worst, the largest over the region (each ICC's
// lowest mean: a higher mean at one ICC moves the whole Beta up, and the
// failure falls as p rises), and best, the least (each ICC's highest
// mean). worstAt and bestAt are the region's points that give them.
type bounds struct {
	worst, best     []float64
	worstAt, bestAt []Spread
}

// bounds computes the region's failure bounds.
func (r region) bounds() bounds {
	b := bounds{
		worst: make([]float64, kSearch), best: make([]float64, kSearch),
		worstAt: make([]Spread, kSearch), bestAt: make([]Spread, kSearch),
	}
	for k := range kSearch {
		b.worst[k], b.best[k] = -1, 2
	}
	for _, row := range r.rows {
		lo := Spread{Mean: row.low, ICC: row.icc}
		for k, f := range lo.failures(kSearch) {
			if f > b.worst[k] {
				b.worst[k], b.worstAt[k] = f, lo
			}
		}
		hi := Spread{Mean: row.high, ICC: row.icc}
		for k, f := range hi.failures(kSearch) {
			if f < b.best[k] {
				b.best[k], b.bestAt[k] = f, hi
			}
		}
	}
	return b
}

// regionBins are the p bins of the region's averages: fewer than the
// fit's (the region has hundreds of points to average over), still
// 0.002 wide, and by the CDF, so the mass below 1/2 is exact.
const regionBins = 500

// negligibleMass is a bin's mass below which the failure averages leave
// it out: 500 such bins change a per-step failure by less than 1e-13, far
// below any failure budget (0.05 over a million steps is 5e-8).
const negligibleMass = 2e-16

// runSuccess is the whole run's success at a mean per-step failure f.
func runSuccess(steps int, f float64) float64 {
	return math.Exp(float64(steps) * math.Log1p(-math.Min(1, f)))
}

// smallestK returns the smallest margin whose failure gives a whole run
// of steps steps a success of at least target, or 0 when none does.
func smallestK(fail []float64, steps int, target float64) int {
	for k, f := range fail {
		if f >= 0 && runSuccess(steps, f) >= target {
			return k + 1
		}
	}
	return 0
}

// verdict is what a region says of k: Safe, the smallest margin that
// reaches the target everywhere in it (0 if none); Best, the smallest
// that reaches it somewhere (0 if none).
type verdict struct {
	Safe, Best int
	b          bounds
	near       bool // the safe k is never called far apart (finiteVerdict)
}

// farApart is the ratio of the safe margin to the most hopeful one from
// which the samples are said not to know k: a race's samples grow about
// as k, so the safe k would cost more than twice what the region's most
// hopeful reading needs.
const farApart = 2

// decided: a k holds over the whole region and is not far apart from
// the most hopeful k (recommend), or no k holds anywhere in it (refuse).
func (v verdict) decided() bool {
	return v.Best == 0 || (v.Safe > 0 && (v.near || v.Safe <= farApart*v.Best))
}

func (r region) verdict(steps int, target float64) verdict {
	b := r.bounds()
	if len(r.rows) == 0 {
		return verdict{b: b}
	}
	return verdict{Safe: smallestK(b.worst, steps, target), Best: smallestK(b.best, steps, target), b: b}
}
