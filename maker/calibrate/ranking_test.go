package calibrate_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/stretchr/testify/assert"
)

func estimate(model string, p float64, kmin int, perSample float64, plan *calibrate.Plan, noK string) calibrate.ModelEstimate {
	m := calibrate.ModelEstimate{Model: model}
	m.P, m.KMin, m.CostPerSample, m.Plan, m.NoK = p, kmin, perSample, plan, noK
	return m
}

// TestRankingCheapestFirst: models are ordered by the whole run's
// expected dollars, not by p or by the price of a sample; a model with no
// plan comes last.
func TestRankingCheapestFirst(t *testing.T) {
	t.Parallel()
	models := []calibrate.ModelEstimate{
		estimate("none", 0.4, 0, 0.001, nil, "p is not above 1/2"),
		estimate("dear", 0.999, 3, 0.01, &calibrate.Plan{Cost: 40}, ""),
		estimate("cheap", 0.9, 7, 0.0001, &calibrate.Plan{Cost: 2.5}, ""),
	}
	assert.Equal(t, "models by expected dollars for the whole run at the target:\n"+
		"  1. cheap: $2.5000 (k=7, p=0.9000, $0.000100 a sample)\n"+
		"  2. dear: $40.0000 (k=3, p=0.9990, $0.010000 a sample)\n"+
		"  3. none: no k_min (p is not above 1/2)\n"+
		"use cheap\n", calibrate.Ranking(models))
	assert.Equal(t, "none", models[0].Model, "the caller's slice is not reordered")
}

func TestRankingOfNoPlanAndOfOneModel(t *testing.T) {
	t.Parallel()
	none := []calibrate.ModelEstimate{estimate("a", 0.4, 0, 0, nil, "hard"), estimate("b", 0.3, 0, 0, nil, "harder")}
	assert.Equal(t, "models by expected dollars for the whole run at the target:\n"+
		"  1. a: no k_min (hard)\n  2. b: no k_min (harder)\nno model reaches the target\n", calibrate.Ranking(none))
	assert.Empty(t, calibrate.Ranking(none[:1]), "one model: nothing to rank")
}

func TestRoundString(t *testing.T) {
	t.Parallel()
	r := calibrate.Round{Look: 2, Forecast: 900, NewSteps: 30, Samples: 300, SamplesSoFar: 1000, RegionConfidence: 0.975}
	assert.Equal(t, "undecided after 1000 samples; the forecast says about 900 more samples would settle it; look 2 (region at 97.5%): 300 samples (30 new steps, 0 more per sampled step)", r.String())
	r.Forecast, r.Cost, r.SpentSoFar = 0, 0.5, 1.25
	assert.Equal(t, "undecided after 1000 samples; the forecast cannot tell how many more samples would settle it; look 2 (region at 97.5%): 300 samples (30 new steps, 0 more per sampled step), ~$0.5000 (spent $1.2500)", r.String())
}
