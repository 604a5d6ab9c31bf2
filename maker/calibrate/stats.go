package calibrate

import "math"

// ClopperPearson is the exact two-sided interval, at confidence c in
// (0, 1), of a proportion with x successes of n trials:
//
//	lower = the α/2 quantile of Beta(x, n-x+1)   (0 when x = 0)
//	upper = the 1-α/2 quantile of Beta(x+1, n-x) (1 when x = n)
//
// with α = 1-c. It inverts the binomial tests, so for whole x and n its
// coverage is at least c for every p (conservative, unlike Wilson's or
// the normal interval). x and n may be fractional: Run passes effective
// counts (see Estimate.DesignEffect). Without trials it is [0, 1].
// Cost: two inversions of the regularized incomplete beta function, by
// bisection; about O(sqrt(n)) work per evaluation.
func ClopperPearson(x, n, c float64) (lower, upper float64) {
	if !(n > 0) {
		return 0, 1
	}
	x = math.Max(0, math.Min(n, x))
	alpha := 1 - c
	lower, upper = 0, 1
	if x > 0 {
		lower = betaQuantile(alpha/2, x, n-x+1)
	}
	if x < n {
		upper = betaQuantile(1-alpha/2, x+1, n-x)
	}
	return lower, upper
}

// betaQuantile returns the q quantile of Beta(a, b), by bisection on the
// regularized incomplete beta function to 1e-13.
func betaQuantile(q, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for range 100 {
		mid := (lo + hi) / 2
		if regIncBeta(mid, a, b) < q {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-13 {
			break
		}
	}
	return (lo + hi) / 2
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by
// its continued fraction (modified Lentz), evaluated on the side where
// it converges fast.
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

// betaCF evaluates the continued fraction of the incomplete beta
// function (Numerical Recipes' betacf), with enough terms for large a+b.
func betaCF(x, a, b float64) float64 {
	const tiny = 1e-300
	maxIter := 200 + int(10*math.Sqrt(a+b))
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= maxIter; m++ {
		mf := float64(m)
		m2 := 2 * mf
		aa := mf * (b - mf) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + mf) * (qab + mf) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return h
}

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
