package calibrate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Ranking orders several models of a calibration by the expected dollars
// of the whole run at the target (each one's Plan: its p, its k_min, its
// measured cost per sample, cached tokens included), cheapest first, and
// says which to use; models with no plan (no margin helps) come last, in
// their order. It is "" for fewer than two models. Cost: a sort.
func Ranking(models []ModelEstimate) string {
	if len(models) < 2 {
		return ""
	}
	order := slices.Clone(models)
	slices.SortStableFunc(order, func(a, b ModelEstimate) int {
		switch {
		case a.Plan == nil && b.Plan == nil:
			return 0
		case a.Plan == nil:
			return 1
		case b.Plan == nil:
			return -1
		}
		return cmp.Compare(a.Plan.Cost, b.Plan.Cost)
	})
	var b strings.Builder
	b.WriteString("models by expected dollars for the whole run at the target:\n")
	for i, m := range order {
		if m.Plan == nil {
			fmt.Fprintf(&b, "  %d. %s: no k_min (%s)\n", i+1, m.Model, m.NoK)
			continue
		}
		fmt.Fprintf(&b, "  %d. %s: $%.4f (k=%d, p=%.4f, $%.6f a sample)\n", i+1, m.Model, m.Plan.Cost, m.KMin, m.P, m.CostPerSample)
	}
	if order[0].Plan != nil {
		fmt.Fprintf(&b, "use %s\n", order[0].Model)
	} else {
		b.WriteString("no model reaches the target\n")
	}
	return b.String()
}

// String is the note before a round of Config.UntilDecided: what the
// forecast says, the round's samples and their forecast price.
func (r Round) String() string {
	want := "the forecast cannot tell how many more samples would settle it"
	if r.Forecast > 0 {
		want = fmt.Sprintf("the forecast says about %d more samples would settle it", r.Forecast)
	}
	cost := ""
	if r.Cost > 0 || r.SpentSoFar > 0 {
		cost = fmt.Sprintf(", ~$%.4f (spent $%.4f)", r.Cost, r.SpentSoFar)
	}
	return fmt.Sprintf("undecided after %d samples; %s; look %d (region at %.4g%%): %d samples (%d new steps, %d more per sampled step)%s",
		r.SamplesSoFar, want, r.Look, 100*r.RegionConfidence, r.Samples, r.NewSteps, r.ExtraSamplesEach, cost)
}
