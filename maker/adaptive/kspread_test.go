package adaptive_test

import (
	"github.com/mdap-go/mdap/maker/adaptive"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdaptiveKEarlyStepsDoNotLock: the start of issue 34's seed 5294 (a
// first step at k = 30, 33 of 37 right, then a step the model split, 12
// of 24), then steady steps at p 0.9. The old plan took a design effect
// of 9.02 from the two steps, fell to a bound of 0.52, charged a step
// 1.57 times the whole budget and ran every later step at k = 30. Now,
// after every step, the ledger holds at most the budget, and once the
// steady steps have spoken k is back near the k_min of p 0.9 (6 for 4,095
// steps). Only Observe and Next are used, so the same test runs against
// the old code (main at 571b620): there it fails at step 3, a step over
// budget.
func TestAdaptiveKEarlyStepsDoNotLock(t *testing.T) {
	a, err := adaptive.Policy{Target: 0.95, Steps: 4095}.WithDefaults()
	require.NoError(t, err)
	var st adaptive.KState
	st.Source = adaptive.SourceCorrectness
	rng := rand.New(rand.NewPCG(1, 2))
	k := 0
	for i := range 300 {
		k, _, _ = a.Next(i, st)
		x, n := 0, 0
		switch i {
		case 0:
			x, n = 33, 37
		case 1:
			x, n = 12, 24
		default:
			// A race at margin k against one rival at p 0.9.
			for lead := 0; lead < k && lead > -k; n++ {
				if rng.Float64() < 0.9 {
					x++
					lead++
				} else {
					lead--
				}
			}
		}
		a.Observe(&st, i, k, x, n)
		require.LessOrEqual(t, st.Spent, 1-a.Target+1e-12, "step %d: the ledger within the budget", i)
		require.Zero(t, st.OverBudget, "step %d", i)
	}
	assert.LessOrEqual(t, k, 9, "k at step 300: back near k_min, not locked at Max")
}
