package calibrate

import (
	"math"

	"github.com/mdap-go/mdap/internal/stats"
	"github.com/mdap-go/mdap/maker/adaptive"
)

// Spread is the fitted distribution of per-step p over the task's steps:
// a Beta distribution with mean Mean and intra-class correlation ICC
// (the correlation between two samples' rightness on one step), fitted
// by maximum likelihood to the sampled steps' valid samples as a
// beta-binomial (each sampled step a cluster). ICC 0 is every step at
// the same p; towards 1 the steps split into ones always right and ones
// always wrong (the simulated model's DifficultySpread is this ICC).
type Spread struct {
	Mean float64 `json:"mean"`
	ICC  float64 `json:"icc"`
	// Hard is the fitted share of steps whose p is below 1/2: steps that
	// voting decides wrong more surely as k grows when their errors agree.
	Hard float64 `json:"hard_share_fitted"`
}

// pointMassICC is the ICC below which the spread is taken as no spread
// (every step at the mean): the Beta is then narrower than any sample
// could tell.
const pointMassICC = 1e-6

// bins are the p grid on which averages over a spread are taken.
const bins = 2000

// pointMass: the spread is taken as every step at the mean (no Beta).
func (s Spread) pointMass() bool { return s.ICC < pointMassICC || s.Mean <= 0 || s.Mean >= 1 }

// massesIn returns the Beta's probability of each of n equal bins of p
// (by its CDF, so spikes at 0 or 1 are counted exactly), nil for a point
// mass.
func (s Spread) massesIn(n int) []float64 {
	if s.pointMass() {
		return nil
	}
	m := make([]float64, n)
	prev := 0.0
	for i := range n {
		c := stats.BetaCDF(float64(i+1)/float64(n), s.Mean, s.ICC)
		m[i] = math.Max(0, c-prev)
		prev = c
	}
	return m
}

// failuresOn returns the spread's mean per-step failure at each margin
// 1..kmax (index k-1): adaptive.StepFailure(p, k) averaged over the Beta on
// n bins of p by its CDF, leaving out bins of mass at most skip; the
// share of steps decided wrong at margin k when a step's errors go to
// one rival answer (the worst case; on a step whose p is below 1/2 that
// is the hard step whose errors agree). A point mass is StepFailure at
// the mean. r^k per bin is raised one k at a time (no Pow in the loop).
func (s Spread) failuresOn(n, kmax int, skip float64) []float64 {
	out := make([]float64, kmax)
	m := s.massesIn(n)
	if m == nil {
		for k := 1; k <= kmax; k++ {
			out[k-1] = adaptive.StepFailure(s.Mean, k)
		}
		return out
	}
	r := make([]float64, len(m))
	rk := make([]float64, len(m))
	for i := range m {
		p := (float64(i) + 0.5) / float64(n)
		r[i] = (1 - p) / p
		rk[i] = 1
	}
	for k := 1; k <= kmax; k++ {
		f := 0.0
		for i, w := range m {
			rk[i] *= r[i]
			if w > skip {
				if math.IsInf(rk[i], 1) {
					f += w
				} else {
					f += w * rk[i] / (1 + rk[i])
				}
			}
		}
		out[k-1] = math.Min(1, f)
	}
	return out
}

// hardShare is the spread's P(p < 1/2).
func (s Spread) hardShare() float64 {
	if s.pointMass() {
		if s.Mean < 0.5 {
			return 1
		}
		return 0
	}
	return stats.BetaCDF(0.5, s.Mean, s.ICC)
}

// PFull is the whole run's success at margin k over steps steps when
// each step's p is drawn from the spread (a Beta with its Mean and ICC,
// as the simulated model's DifficultySpread draws it) and each step's
// errors go to one rival answer: (1 - the mean per-step failure)^steps,
// the mean taken on 2,000 bins of p by the Beta's CDF. Exact for a step
// whose errors all agree, a lower bound otherwise. Cost: 2,000
// evaluations of the incomplete beta function, and k passes over them.
func (s Spread) PFull(steps, k int) float64 { return s.pFull(steps, k) }

// pFull is PFull.
func (s Spread) pFull(steps, k int) float64 {
	return runSuccess(steps, s.failuresOn(bins, k, 0)[k-1])
}

// kSearch is the largest margin calibration considers.
const kSearch = 200

// kMin returns the smallest k in 1..kSearch with pFull at least target,
// or 0 when none reaches it (always 0 for every step at a p of 1/2 or
// less).
func (s Spread) kMin(steps int, target float64) int {
	if s.pointMass() && s.Mean <= 0.5 {
		return 0
	}
	return smallestK(s.failuresOn(bins, kSearch, 0), steps, target)
}

// wcluster is w sampled steps with the same counts: n valid samples, x
// right.
type wcluster struct{ x, n, w float64 }

// group merges clusters with equal counts (most have Samples valid
// samples, so a few dozen groups stand for thousands of steps), leaving
// out those without valid samples.
func group(cs []cluster) []wcluster {
	idx := map[cluster]int{}
	var out []wcluster
	for _, c := range cs {
		if c.n == 0 {
			continue
		}
		i, ok := idx[c]
		if !ok {
			i = len(out)
			idx[c] = i
			out = append(out, wcluster{x: c.x, n: c.n})
		}
		out[i].w++
	}
	return out
}

// tallyOf is the clusters' sufficient statistics for the beta-binomial
// likelihood (stats.Tally): their counts are whole.
func tallyOf(cs []wcluster) stats.Tally {
	var t stats.Tally
	for _, c := range cs {
		t.Add(int(c.x), int(c.n), int(c.w))
	}
	return t
}

// ICC search range, on a log scale.
const (
	minICC = 1e-7
	maxICC = 0.999
)

// profile returns the largest log-likelihood over the ICC at mean mu,
// and that ICC: a coarse log grid, then golden-section search.
func profile(t stats.Tally, mu float64) (float64, float64) {
	lo, hi := math.Log(minICC), math.Log(maxICC)
	const grid = 16
	best, bi := math.Inf(-1), 0
	for i := 0; i <= grid; i++ {
		l := lo + (hi-lo)*float64(i)/grid
		if v := t.LogLik(mu, math.Exp(l)); v > best+1e-9 { // ties: the smaller ICC
			best, bi = v, i
		}
	}
	a := lo + (hi-lo)*float64(max(0, bi-1))/grid
	b := lo + (hi-lo)*float64(min(grid, bi+1))/grid
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := b-g*(b-a), a+g*(b-a)
	f1, f2 := t.LogLik(mu, math.Exp(x1)), t.LogLik(mu, math.Exp(x2))
	for range 24 {
		if f1 < f2 {
			a, x1, f1 = x1, x2, f2
			x2 = a + g*(b-a)
			f2 = t.LogLik(mu, math.Exp(x2))
		} else {
			b, x2, f2 = x2, x1, f1
			x1 = b - g*(b-a)
			f1 = t.LogLik(mu, math.Exp(x1))
		}
	}
	l, v := x1, f1
	if f2 > f1 {
		l, v = x2, f2
	}
	if v <= best+1e-9 { // no better than the grid point (a flat likelihood: the smaller ICC)
		return best, math.Exp(lo + (hi-lo)*float64(bi)/grid)
	}
	return v, math.Exp(l)
}

// muEdge bounds the mean away from 0 and 1, where the Beta degenerates.
const muEdge = 1e-12

// fitSpread fits the spread to the clusters by maximum likelihood and
// returns it, the largest log-likelihood, and the profile-likelihood
// interval on the mean at two-sided confidence conf: the means whose profile log-likelihood is
// within χ²₁(conf)/2 of the maximum. The likelihood treats each step as
// a cluster (a beta-binomial), so the interval widens as the steps
// differ, and follows the skew of the spread. Without valid samples it
// returns the zero Spread and [0, 1].
func fitSpread(cs []wcluster, conf float64) (s Spread, low, high, top float64) {
	t := tallyOf(cs)
	x, n := t.Successes(), t.Trials()
	if n == 0 {
		return Spread{}, 0, 1, math.Inf(-1)
	}
	clamp := func(m float64) float64 { return math.Min(1-muEdge, math.Max(muEdge, m)) }
	// The mean's MLE: golden section on the logit around the pooled
	// share (the profile is unimodal in practice).
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	inv := func(t float64) float64 { return clamp(1 / (1 + math.Exp(-t))) }
	ph := clamp(x / n)
	a, b := logit(ph)-4, logit(ph)+4
	g := (math.Sqrt(5) - 1) / 2
	pl := func(l float64) float64 { v, _ := profile(t, inv(l)); return v }
	x1, x2 := b-g*(b-a), a+g*(b-a)
	f1, f2 := pl(x1), pl(x2)
	for range 24 {
		if f1 < f2 {
			a, x1, f1 = x1, x2, f2
			x2 = a + g*(b-a)
			f2 = pl(x2)
		} else {
			b, x2, f2 = x2, x1, f1
			x1 = b - g*(b-a)
			f1 = pl(x1)
		}
	}
	tHat := x1
	if f2 > f1 {
		tHat = x2
	}
	if edge := pl(logit(ph)); edge > math.Max(f1, f2) {
		tHat = logit(ph)
	}
	top, icc := profile(t, inv(tHat))
	// The fit is the maximum-likelihood point, whatever its ICC: a spread
	// the samples cannot tell from none is not taken as none (the plan
	// covers every ICC its region holds; see region).
	s = Spread{Mean: inv(tHat), ICC: icc}
	s.Hard = s.hardShare()

	z := stats.NormalQuantile((1 + conf) / 2)
	cut := top - z*z/2
	// Each end: bisection on the logit between the MLE and the edge.
	end := func(far float64) float64 {
		if pl(far) >= cut {
			return inv(far)
		}
		in, out := tHat, far
		for range 26 {
			mid := (in + out) / 2
			if pl(mid) >= cut {
				in = mid
			} else {
				out = mid
			}
		}
		return inv(in)
	}
	low, high = end(logit(muEdge)), end(logit(1-muEdge))
	if x == 0 {
		low = 0
	}
	if x == n {
		high = 1
	}
	return s, low, high, top
}
