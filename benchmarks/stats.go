package benchmarks

import (
	"math"

	"github.com/mdap-go/mdap/internal/stats"
)

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Mean is a sample mean with its 95% confidence interval (normal
// approximation: mean ± 1.96 standard errors).
type Mean struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"` // the sample standard deviation
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// accum accumulates a mean and a variance (Welford).
type accum struct {
	n        int
	mean, m2 float64
}

func (a *accum) add(x float64) {
	a.n++
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
}

func (a accum) result() Mean {
	m := Mean{N: a.n, Mean: a.mean}
	if a.n > 1 {
		m.SD = math.Sqrt(a.m2 / float64(a.n-1))
	}
	se := 0.0
	if a.n > 0 {
		se = m.SD / math.Sqrt(float64(a.n))
	}
	m.Lo, m.Hi = m.Mean-z95*se, m.Mean+z95*se
	return m
}

// SE is the mean's standard error.
func (m Mean) SE() float64 {
	if m.N == 0 {
		return math.NaN()
	}
	return m.SD / math.Sqrt(float64(m.N))
}

// Z is how many standard errors the mean lies from want; 0 when every
// draw was want, ±1e9 when every draw was the same other value.
func (m Mean) Z(want float64) float64 {
	d, se := m.Mean-want, m.SE()
	switch {
	case !(se > 0) && math.Abs(d) < 1e-12:
		return 0
	case !(se > 0):
		return math.Copysign(1e9, d)
	}
	return d / se
}

// DrawsFor is how many draws put the 95% interval's half-width at rel
// times want: (1.96 SD / (rel want))².
func (m Mean) DrawsFor(want, rel float64) int {
	return int(math.Ceil(math.Pow(z95*m.SD/(rel*want), 2)))
}

// Rate is a proportion with its 95% Wilson score interval.
type Rate struct {
	Hits int     `json:"hits"`
	N    int     `json:"n"`
	Rate float64 `json:"rate"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// newRate returns hits of n with its 95% Wilson interval.
func newRate(hits, n int) Rate { return wilson(hits, n, z95) }

// Within3 reports whether x is inside the rate's 3-standard-error (99.7%)
// Wilson interval: the test of a match to theory when many cells are
// checked at once.
func (r Rate) Within3(x float64) bool {
	w := wilson(r.Hits, r.N, 3)
	return x >= w.Lo && x <= w.Hi
}

// wilson returns hits of n with its Wilson score interval at z
// (stats.Wilson).
func wilson(hits, n int, z float64) Rate {
	r := Rate{Hits: hits, N: n}
	if n == 0 {
		return r
	}
	r.Rate = float64(hits) / float64(n)
	r.Lo, r.Hi = stats.Wilson(r.Rate, float64(n), z)
	return r
}

// Contains reports whether x is inside the interval.
func (r Rate) Contains(x float64) bool { return x >= r.Lo && x <= r.Hi }

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func normPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

func expf(x float64) float64 { return math.Exp(x) }
