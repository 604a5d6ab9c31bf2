package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// BetaShape returns the shape parameters α and β of the Beta
// distribution of mean mu and intra-class correlation rho (the share of
// the variance of one trial's outcome that is its cluster's, 1/(α+β+1)):
// α = mu·s, β = (1-mu)·s with s = α+β = 1/rho - 1. rho must be in
// (0, 1).
func BetaShape(mu, rho float64) (a, b float64) {
	a, b, _ = shape(mu, rho)
	return a, b
}

// shape is BetaShape and s.
func shape(mu, rho float64) (a, b, s float64) {
	s = 1/rho - 1
	return mu * s, (1 - mu) * s, s
}

// BetaCDF is P(p' <= p) for p' drawn from the Beta of mean mu and
// intra-class correlation rho (see BetaShape): gonum's regularized
// incomplete beta function, 0 at or below 0 and 1 at or above 1. mu and
// rho must be in (0, 1).
func BetaCDF(p, mu, rho float64) float64 {
	a, b := BetaShape(mu, rho)
	return mathext.RegIncBeta(a, b, math.Max(0, math.Min(1, p)))
}

// BetaBinomialLog is the log-probability of x successes of n trials under
// the beta-binomial of mean mu and correlation rho (rho 0: the binomial),
// without the binomial coefficient (it cancels in a likelihood ratio and
// does not depend on mu or rho). Cost: six math.Lgamma.
func BetaBinomialLog(x, n int, mu, rho float64) float64 {
	fx, fy := float64(x), float64(n-x)
	if rho == 0 {
		return fx*math.Log(mu) + fy*math.Log1p(-mu)
	}
	a, b, sz := shape(mu, rho)
	lg := func(v float64) float64 { l, _ := math.Lgamma(v); return l }
	return lg(a+fx) - lg(a) + lg(b+fy) - lg(b) - lg(sz+fx+fy) + lg(sz)
}

// Tally holds the sufficient statistics of clusters of trials for the
// beta-binomial model: Right[j] counts the clusters with more than j
// successes, Wrong[j] those with more than j failures, Size[j] those
// with more than j trials. The log-likelihood at mean mu and correlation
// rho is then, up to a constant,
//
//	Σ_j Right[j]·ln(α+j) + Σ_j Wrong[j]·ln(β+j) − Σ_j Size[j]·ln(α+β+j)
//
// (Γ(α+x)/Γ(α) = Π_{j<x} (α+j), and so on), so clusters of any number
// are summed in O(the largest cluster). A race stops on its votes, but
// the probability of a cluster's votes is p^x·(1−p)^(n−x) times a count
// of paths that does not depend on p, so the stopping rule leaves the
// likelihood unchanged. The zero Tally holds no cluster; its JSON form
// is the three arrays.
type Tally struct {
	Right []int `json:"right,omitempty"`
	Wrong []int `json:"wrong,omitempty"`
	Size  []int `json:"size,omitempty"`
}

// Add counts w clusters with x successes of n trials each (0 <= x <= n).
func (s *Tally) Add(x, n, w int) {
	grow := func(c []int, m int) []int {
		for len(c) < m {
			c = append(c, 0)
		}
		for j := range m {
			c[j] += w
		}
		return c
	}
	s.Right = grow(s.Right, x)
	s.Wrong = grow(s.Wrong, n-x)
	s.Size = grow(s.Size, n)
}

// Clone returns a deep copy.
func (s Tally) Clone() Tally {
	return Tally{Right: append([]int(nil), s.Right...), Wrong: append([]int(nil), s.Wrong...), Size: append([]int(nil), s.Size...)}
}

// Successes is the tally's successes over all its clusters, and Trials
// its trials.
func (s Tally) Successes() float64 { return sumInts(s.Right) }

// Trials is the tally's trials over all its clusters.
func (s Tally) Trials() float64 { return sumInts(s.Size) }

func sumInts(c []int) float64 {
	t := 0
	for _, v := range c {
		t += v
	}
	return float64(t)
}

// LogLik is the beta-binomial log-likelihood of the tally at mean mu in
// (0, 1) and correlation rho in [0, 1) (rho 0: the binomial), up to a
// constant. Cost: O(the distinct cluster sizes and counts) math.Lgamma
// (risingLog).
func (s Tally) LogLik(mu, rho float64) float64 {
	if rho == 0 {
		return sumInts(s.Right)*math.Log(mu) + sumInts(s.Wrong)*math.Log1p(-mu)
	}
	a, b, sz := shape(mu, rho)
	return risingLog(s.Right, a) + risingLog(s.Wrong, b) - risingLog(s.Size, sz)
}

// risingLog is Σ_j c[j]·ln(a+j). The counts are a non-increasing step
// function of j (how many clusters have more than j), so each run of
// equal counts c over [j0, j1) is c·(lnΓ(a+j1) − lnΓ(a+j0)); a short run
// is summed term by term.
func risingLog(c []int, a float64) float64 {
	l := 0.0
	for j0 := 0; j0 < len(c); {
		j1 := j0 + 1
		for j1 < len(c) && c[j1] == c[j0] {
			j1++
		}
		if w := float64(c[j0]); w != 0 {
			if j1-j0 <= shortRun {
				for j := j0; j < j1; j++ {
					l += w * math.Log(a+float64(j))
				}
			} else {
				hi, _ := math.Lgamma(a + float64(j1))
				lo, _ := math.Lgamma(a + float64(j0))
				l += w * (hi - lo)
			}
		}
		j0 = j1
	}
	return l
}

// shortRun is the longest run of equal counts that risingLog sums term
// by term rather than by two math.Lgamma.
const shortRun = 8

// Slope is the derivative of LogLik in mu, decreasing in mu (the
// log-likelihood is concave in mu at a fixed rho).
func (s Tally) Slope(mu, rho float64) float64 {
	if rho == 0 {
		return sumInts(s.Right)/mu - sumInts(s.Wrong)/(1-mu)
	}
	a, b, sz := shape(mu, rho)
	d := 0.0
	for j, c := range s.Right {
		if c > 0 {
			d += float64(c) / (a + float64(j))
		}
	}
	for j, c := range s.Wrong {
		if c > 0 {
			d -= float64(c) / (b + float64(j))
		}
	}
	return sz * d
}

// The range of mu searched by MuHat and MuLow, on the logit scale.
const (
	muLogitLo = -12.0
	muLogitHi = 30.0
)

// Logistic is 1/(1+e^-t), the inverse of the logit.
func Logistic(t float64) float64 { return 1 / (1 + math.Exp(-t)) }

// MuHat is the mean that maximises the tally's likelihood at rho, by
// bisection on Slope on the logit scale between -12 and 30 (an end when
// the maximum lies beyond it). Cost: 48 Slopes.
func (s Tally) MuHat(rho float64) float64 {
	lo, hi := muLogitLo, muLogitHi
	if s.Slope(Logistic(hi), rho) > 0 {
		return Logistic(hi)
	}
	if s.Slope(Logistic(lo), rho) < 0 {
		return Logistic(lo)
	}
	for range 48 {
		mid := (lo + hi) / 2
		if s.Slope(Logistic(mid), rho) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return Logistic((lo + hi) / 2)
}

// MuLow is the smallest mean below top whose likelihood at rho is at
// least thr (top's is), by bisection on the logit scale, rounded outwards
// (conservative as a lower bound). Cost: 48 LogLiks.
func (s Tally) MuLow(rho, top, thr float64) float64 {
	lo, hi := muLogitLo, math.Log(top/(1-top))
	if s.LogLik(Logistic(lo), rho) >= thr {
		return Logistic(lo)
	}
	for range 48 {
		mid := (lo + hi) / 2
		if s.LogLik(Logistic(mid), rho) >= thr {
			hi = mid
		} else {
			lo = mid
		}
	}
	return Logistic(lo)
}
