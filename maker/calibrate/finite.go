package calibrate

import (
	"math"

	"github.com/mdap-go/mdap/internal/stats"
	"github.com/mdap-go/mdap/maker/adaptive"
)

// When calibration samples every step of the task, the steps are not a
// sample of a population whose spread must be modelled: each step's own
// p is bounded from its own samples. finiteVerdict plans k that way:
// each step's one-sided Clopper-Pearson bounds at level (1-conf)/steps
// (Bonferroni, so that all of them hold at once with probability at
// least conf), and the run's success, the product of the steps', is
// bounded below by the steps' lower bounds and above by their upper
// ones. No Beta is assumed.

// finiteVerdict is the verdict of clusters that cover every step of a
// task, their counts scaled by scale (1: as sampled; more: the forecast
// of more samples of each step). Its failure arrays are the per-step
// failures that, over len(steps) steps, give the run's bound:
// 1 - (∏(1 - f_i))^(1/steps).
func finiteVerdict(cs []wcluster, target, conf, scale float64) verdict {
	steps := 0.0
	for _, c := range cs {
		steps += c.w
	}
	b := bounds{worst: make([]float64, kSearch), best: make([]float64, kSearch), worstAt: make([]Spread, kSearch), bestAt: make([]Spread, kSearch)}
	if steps == 0 {
		return verdict{b: b}
	}
	per := (1 - conf) / steps
	logLo, logHi := make([]float64, kSearch), make([]float64, kSearch)
	for _, c := range cs {
		lo, hi := stats.ClopperPearson(c.x*scale, c.n*scale, 1-2*per)
		for k := 1; k <= kSearch; k++ {
			logLo[k-1] += c.w * math.Log1p(-adaptive.StepFailure(lo, k))
			logHi[k-1] += c.w * math.Log1p(-adaptive.StepFailure(hi, k))
		}
	}
	n := int(steps)
	for k := range kSearch {
		b.worst[k] = -math.Expm1(logLo[k] / steps)
		b.best[k] = -math.Expm1(logHi[k] / steps)
	}
	// Far apart does not apply: the steps' own bounds are no model that
	// more steps could refine, and more samples of each narrow them.
	return verdict{Safe: smallestK(b.worst, n, target), Best: smallestK(b.best, n, target), b: b, near: true}
}

// moreSamplesEach forecasts the factor of more samples of every step
// that would decide a finite verdict if they looked like these (the
// counts scaled), by bisection on its log to within 5%; 0 when even
// MaxSamples/steps samples a step would not.
func moreSamplesEach(cs []wcluster, target, conf float64, samplesEach int) float64 {
	hiS := float64(MaxSamples) / float64(max(1, samplesEach))
	decided := func(s float64) bool { return finiteVerdict(cs, target, conf, s).decided() }
	if hiS <= 1 || !decided(hiS) {
		return 0
	}
	lo, hi := 1.0, hiS
	for hi/lo > 1.05 {
		mid := math.Sqrt(lo * hi)
		if decided(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
