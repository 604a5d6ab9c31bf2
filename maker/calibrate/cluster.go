package calibrate

import "math"

// cluster is one sampled step's valid samples: n of them, x right.
type cluster struct{ x, n float64 }

// designEffect is the variance of the pooled proportion p = Σx/Σn under
// the cluster-robust (ratio estimator) formula, over its variance if the
// samples were independent: 1 when the steps are alike, more when some
// steps are harder than others, since the samples of one step then
// share its difficulty. It is never below 1 (clustering cannot make the
// estimate surer than independent samples), and 1 when p is 0 or 1 or
// fewer than two steps have valid samples.
func designEffect(cs []cluster, p float64) float64 {
	var total, ss float64
	k := 0
	for _, c := range cs {
		if c.n == 0 {
			continue
		}
		k++
		total += c.n
		r := c.x - p*c.n
		ss += r * r
	}
	if k < 2 || p <= 0 || p >= 1 {
		return 1
	}
	robust := float64(k) / float64(k-1) * ss / (total * total)
	binomial := p * (1 - p) / total
	return math.Max(1, robust/binomial)
}
