package evidence

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUpperKnownValues: the one-sided 95% Clopper-Pearson bounds, computed
// independently (exact rational sums of the binomial distribution
// function, bisected in Python's fractions; R's binom.test(x, n,
// alternative = "less") gives the same), and the closed forms at the ends.
func TestUpperKnownValues(t *testing.T) {
	for _, c := range []struct {
		x, n int
		want float64
	}{
		{1, 100, 0.046560}, {2, 100, 0.061619}, {4, 100, 0.089196}, {5, 100, 0.102253},
		{10, 100, 0.163718}, {4, 200, 0.045180}, {5, 200, 0.051843}, {6, 200, 0.058350},
		{17, 50, 0.465299}, {43, 100, 0.517176},
	} {
		assert.InDelta(t, c.want, Upper(c.x, c.n, 0.95), 2e-6, "%d of %d", c.x, c.n)
	}
	for _, n := range []int{1, 10, 59, 1000} {
		assert.InDelta(t, 1-math.Pow(0.05, 1/float64(n)), Upper(0, n, 0.95), 1e-12, "0 of %d: 1 - 0.05^(1/n)", n)
		assert.InDelta(t, math.Pow(0.95, 1/float64(n)), Upper(n-1, n, 0.95), 1e-9, "%d of %d: P(X <= n-1) = 1 - p^n", n-1, n)
		assert.InDelta(t, 1-math.Pow(0.95, 1/float64(n)), Lower(1, n, 0.95), 1e-9, "1 of %d: P(X >= 1) = 1 - (1-p)^n", n)
	}
	assert.Equal(t, 1.0, Upper(5, 5, 0.95))
	assert.Equal(t, 1.0, Upper(0, 0, 0.95))
	assert.Zero(t, Lower(0, 100, 0.95))
	// The lower bound mirrors the upper: the same table seen from the
	// successes.
	assert.InDelta(t, 1-0.046560, Lower(99, 100, 0.95), 2e-6)
}

// TestMinRuns: 59 runs without a failure are the fewest that show a 5%
// rate at 95% (0 of 58 bounds it at 0.0503); 299 for 1%.
func TestMinRuns(t *testing.T) {
	assert.Equal(t, 59, MinRuns(0.05, 0.95))
	assert.Greater(t, Upper(0, 58, 0.95), 0.05)
	assert.LessOrEqual(t, Upper(0, 59, 0.95), 0.05)
	assert.Equal(t, 299, MinRuns(0.01, 0.95))
}

// TestJudge: the old standard (an exact binomial test at 1% that does not
// reject) accepted 10 failures of 100 against 5%; the upper bound needs
// at most 1, and the lower bound calls 10 a violation.
func TestJudge(t *testing.T) {
	assert.Equal(t, Met, Judge(1, 100, 0.05))
	assert.Equal(t, NotShown, Judge(2, 100, 0.05))
	assert.Equal(t, NotShown, Judge(6, 100, 0.05), "6 of 100: consistent with 5%, not evidence of it")
	assert.Equal(t, Violated, Judge(10, 100, 0.05), "10 of 100, which the old test accepted: the 95% lower bound is above 5%")
	assert.Equal(t, Met, Judge(4, 200, 0.05))
	assert.Equal(t, NotShown, Judge(0, 40, 0.05), "40 runs cannot show 5%")
	assert.Equal(t, Violated, Judge(43, 100, 0.05))
}

type recorder struct {
	errors, logs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, a...))
}
func (r *recorder) Logf(format string, a ...any) { r.logs = append(r.logs, fmt.Sprintf(format, a...)) }

func TestAssertions(t *testing.T) {
	var r recorder
	assert.True(t, AtMost(&r, "x", 1, 100, 0.05))
	assert.Empty(t, r.errors)
	assert.False(t, AtMost(&r, "x", 10, 100, 0.05))
	if assert.Len(t, r.errors, 1) {
		assert.Contains(t, r.errors[0], "x: 10 of 100 runs failed (0.1); 95% upper bound 0.1637 against 0.05: not shown: the promise does not hold at this evidence")
	}
	assert.False(t, AtMost(&r, "z", 0, 40, 0.05))
	assert.Contains(t, r.errors[len(r.errors)-1], "z: 0 of 40 runs failed (0); 95% upper bound 0.0722 against 0.05: not shown (fewer runs than the 59 that a rate of 0.05 needs even without a failure)")
	r = recorder{}
	assert.True(t, Above(&r, "y", 43, 100, 0.05))
	assert.False(t, Above(&r, "y", 5, 100, 0.05))
	assert.Len(t, r.errors, 1)
}
