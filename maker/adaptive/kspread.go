package adaptive

import (
	"math"
	"sync"

	"github.com/mdap-go/mdap/internal/stats"
)

// SpreadTally holds the sufficient statistics of a run's steps for a
// beta-binomial model of their difficulty (internal/stats's Tally): each
// step's p drawn from a Beta distribution with mean P and intra-class
// correlation Rho (the share of the variance of a vote's rightness that
// is the step's), its valid votes right with that p. Right[j] counts the
// steps with more than j successes, Wrong[j] those with more than j
// failures, Size[j] those with more than j valid votes. A race stops on
// its votes (at a lead of k), but the stopping rule leaves the
// likelihood unchanged: the fit is the same as for votes of a fixed
// number.
type SpreadTally = stats.Tally

// spreadPretest is the log-likelihood ratio over no spread at which a
// fitted spread counts in the plan: 5, a one-sided test at about 0.08%
// (2·5 = 10 against χ²₁'s half at the boundary). At z²/2 (a test at 2.5%,
// repeated at each of tens of refits) a clean 7-disk run with eight
// rivals fitted a spread of 0.116 from 48 steps and stopped.
const spreadPretest = 5.0

// spreadGrid are the correlations the fit considers: 0 (steps alike) to
// 0.9 (steps nearly always right or always wrong).
var spreadGrid = []float64{0, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.045, 0.065, 0.09, 0.13, 0.2, 0.3, 0.45, 0.65, 0.9}

// SpreadFit is adaptive k's plan from a SpreadTally: the fitted mean and
// correlation, and the per-step failure at each margin that the plan
// charges, an upper confidence bound over the (P, Rho) the votes do not
// exclude.
type SpreadFit struct {
	// Steps is the steps of the tally the fit was made from.
	Steps int `json:"steps"`
	// P and Rho are the maximum-likelihood mean and correlation (the
	// change-point test's model, DriftTest).
	P   float64 `json:"p"`
	Rho float64 `json:"rho"`
	// PlanRho is the correlation the plan uses: Rho once the votes show
	// a spread (its likelihood beats no spread's by z²/2), else 0.
	PlanRho float64 `json:"plan_rho"`
	// RhoHigh is the largest correlation of the confidence region, and
	// PLow the smallest mean.
	RhoHigh float64 `json:"rho_high"`
	PLow    float64 `json:"p_low"`
	// Fail[k-Floor] is the per-step failure planned at margin k, for k
	// from the policy's Floor to its Max.
	Fail []float64 `json:"fail"`
}

// failAt is the planned per-step failure at k (Fail, with k past its end
// at its last: the failure only falls with k). Without a fit it is 1.
func (f *SpreadFit) failAt(floor, k int) float64 {
	if f == nil || len(f.Fail) == 0 {
		return 1
	}
	i := min(max(k-floor, 0), len(f.Fail)-1)
	return f.Fail[i]
}

// fitSpread fits t and plans for margins floor to max: for each Rho of
// the grid whose profile likelihood is within q = z²/2 of the maximum (z
// the normal quantile of conf: the region whose one-sided bound on any
// function of (P, Rho) is at conf, by the profile likelihood's χ²₁ law),
// the smallest P the region holds at that Rho; and the failure planned at
// k is the largest mean step failure E[StepFailure(p, k)] over those
// points and, for the region's largest Rho, the next Rho of the grid (the
// region may end between two grid points). Cost: O(grid · depth · n) for
// n the longest race, plus O(grid · len(tGrid) · (max − floor)).
func fitSpread(t SpreadTally, steps, floor, kmax int, conf float64) SpreadFit {
	fit := SpreadFit{Steps: steps}
	if len(t.Size) == 0 {
		return fit
	}
	z := stats.NormalQuantile(conf)
	q := z * z / 2
	prof := make([]float64, len(spreadGrid))
	mus := make([]float64, len(spreadGrid))
	best := math.Inf(-1)
	for i, rho := range spreadGrid {
		mus[i] = t.MuHat(rho)
		prof[i] = t.LogLik(mus[i], rho)
		if prof[i] > best {
			best, fit.P, fit.Rho = prof[i], mus[i], rho
		}
	}
	// The smallest rho on the grid within a hair of the best (when no
	// vote is wrong every rho fits alike: the steps are taken as alike),
	// then a golden-section search of the profile between its grid
	// neighbours: the tail of the Beta distribution moves by orders of
	// magnitude between grid points.
	for i, rho := range spreadGrid {
		if prof[i] >= best-1e-9*math.Max(1, math.Abs(best)) {
			fit.Rho, fit.P = rho, mus[i]
			if i > 0 && i+1 < len(spreadGrid) && prof[i] < best+1e-12 {
				lo, hi := math.Log(spreadGrid[i-1]+1e-6), math.Log(spreadGrid[i+1])
				g := (math.Sqrt(5) - 1) / 2
				at := func(l float64) float64 { r := math.Exp(l); return t.LogLik(t.MuHat(r), r) }
				c, d := hi-g*(hi-lo), lo+g*(hi-lo)
				fc, fd := at(c), at(d)
				for range 30 {
					if fc > fd {
						hi, d, fd = d, c, fc
						c = hi - g*(hi-lo)
						fc = at(c)
					} else {
						lo, c, fc = c, d, fd
						d = lo + g*(hi-lo)
						fd = at(d)
					}
				}
				if r := math.Exp((lo + hi) / 2); at(math.Log(r)) > prof[i] {
					fit.Rho, fit.P = r, t.MuHat(r)
				}
			}
			break
		}
	}
	// A spread counts in the plan once the votes show one: the fitted
	// Rho is used when its likelihood beats no spread's by spreadPretest,
	// and 0 otherwise. From a few steps the fitted Rho is noise, and the
	// Beta tail it puts below p = 1/2 would plan a clean run as hopeless;
	// a real spread shows within tens of steps and the plan refits.
	plan, planP := fit.Rho, fit.P
	if fit.Rho > 0 && best-prof[0] < spreadPretest {
		plan, planP = 0, mus[0]
		best = prof[0]
	}
	fit.PlanRho = plan
	thr := best - q
	for i, rho := range spreadGrid {
		if prof[i] >= thr {
			fit.RhoHigh = rho
		}
	}
	fit.PLow = t.MuLow(plan, planP, thr)
	fit.Fail = make([]float64, kmax-floor+1)
	meanFailures(fit.PLow, plan, floor, fit.Fail)
	return fit
}

// The grid of t = logit(p) over which mean step failures are integrated.
const (
	tLo   = -25.0
	tHi   = 25.0
	tStep = 0.01
)

// failTable[k][j] is StepFailure at p = logistic(tLo + j·tStep) and
// margin k, for k up to failTableK: 1/(1 + e^(k·t)).
var (
	failTableOnce sync.Once
	failTable     [][]float64
)

const failTableK = 64

func stepFailureT(t float64, k int) float64 { return 1 / (1 + math.Exp(float64(k)*t)) }

func failTableRow(k int) []float64 {
	failTableOnce.Do(func() {
		n := int((tHi-tLo)/tStep) + 1
		failTable = make([][]float64, failTableK+1)
		for kk := 1; kk <= failTableK; kk++ {
			row := make([]float64, n)
			for j := range row {
				row[j] = stepFailureT(tLo+float64(j)*tStep, kk)
			}
			failTable[kk] = row
		}
	})
	if k <= failTableK {
		return failTable[k]
	}
	row := make([]float64, len(failTable[1]))
	for j := range row {
		row[j] = stepFailureT(tLo+float64(j)*tStep, k)
	}
	return row
}

// meanFailures raises out[k-floor] to the mean StepFailure(p, k) over p
// drawn from the Beta distribution of mean mu and correlation rho (rho 0:
// p = mu), for each k from floor on. The integral is over t = logit(p),
// whose density is proportional to e^(α·t)/(1+e^t)^(α+β), a sum on a grid
// of step 0.01 from -25 to 25, normalised on the grid (the mass it cuts
// off past t = 25 is of steps that are right, so the normalisation only
// raises the result).
func meanFailures(mu, rho float64, floor int, out []float64) {
	if rho == 0 {
		for i := range out {
			out[i] = math.Max(out[i], StepFailure(mu, floor+i))
		}
		return
	}
	sz := 1/rho - 1
	a, b := mu*sz, (1-mu)*sz
	n := int((tHi-tLo)/tStep) + 1
	w := make([]float64, n)
	peak := math.Inf(-1)
	for j := range w {
		t := tLo + float64(j)*tStep
		sp := math.Max(t, 0) + math.Log1p(math.Exp(-math.Abs(t))) // ln(1+e^t)
		w[j] = a*t - (a+b)*sp
		peak = math.Max(peak, w[j])
	}
	total := 0.0
	for j := range w {
		w[j] = math.Exp(w[j] - peak)
		total += w[j]
	}
	for i := range out {
		row := failTableRow(floor + i)
		s := 0.0
		for j, wj := range w {
			s += wj * row[j]
		}
		out[i] = math.Max(out[i], math.Min(1, s/total))
	}
}
