package adaptive

import (
	"math"

	"github.com/mdap-go/mdap/internal/stats"
)

// driftOdds are the alternatives the change-point test watches for: the
// odds of a wrong vote multiplied by 4, 32 and 1024 (a small drop seen
// over many steps, a large one seen within a step or two).
var driftOdds = [...]float64{4, 32, 1024}

// DriftThreshold is the change-point test's threshold on each CUSUM
// statistic (a log-likelihood ratio; e^5.5 is about 250). At 5.5 one
// wrong vote among a step's four to six at p 0.9999 fires it (the late
// drift of docs/calibrate.md is seen at its first wrong vote); a false
// alarm costs a warm-up, never the budget's rule.
const DriftThreshold = 5.5

// DriftTest is adaptive k's change-point test (CUSUM) on the stream of
// steps' votes. For each alternative of driftOdds, a statistic S adds
// each step's log-likelihood ratio of its votes (x right of n) under a
// model as bad as the alternative against the plan's fitted model (both
// beta-binomial with the fitted correlation, so a hard step under a
// measured spread is less surprising than under none), and is reset to 0
// when it falls below. When an S passes DriftThreshold, the model is
// taken to have changed where that S last left 0: the run's evidence
// restarts from the steps since then (Since), the plan is refitted from
// them alone, and while they cannot support a plan the steps run at Max
// (a warm-up, see FailureBudget). A false alarm costs samples, never
// the budget's rule.
type DriftTest struct {
	// Changes counts the change points found.
	Changes int `json:"changes,omitempty"`
	// S are the CUSUM statistics, one per alternative.
	S [len(driftOdds)]float64 `json:"s"`
	// Since are the steps since each S last left 0.
	Since [len(driftOdds)]PTally `json:"since"`
}

// observe runs the test on a step's votes (x right of n, n > 0) against
// st's plan, before st counts them. On a change it replaces st's tally by
// the steps since the change point, resets the test and returns true.
func (d *DriftTest) observe(st *KState, a Policy, x, n int) bool {
	f := st.Fit
	if f == nil || st.Votes == 0 {
		return false
	}
	q0 := math.Max(1-f.P, 0.5/float64(st.Votes+1))
	for i, odds := range driftOdds {
		q1 := math.Min(odds*q0, (1+q0)/2)
		llr := stats.BetaBinomialLog(x, n, 1-q1, f.Rho) - stats.BetaBinomialLog(x, n, 1-q0, f.Rho)
		s := d.S[i] + llr
		switch {
		case s > DriftThreshold:
			seg := d.Since[i].clone()
			seg.Source = st.Source
			*d = DriftTest{Changes: d.Changes + 1}
			st.PTally = seg
			return true
		case s <= 0:
			d.S[i], d.Since[i] = 0, PTally{}
		default:
			d.S[i] = s
			d.Since[i].add(x, n, a.Window)
		}
	}
	return false
}
