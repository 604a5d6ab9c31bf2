package calibrate_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/stretchr/testify/assert"
)

// TestPlanBillsThePromptOncePerRequest: the plan's dollars bill the
// prompt (with its cached share at the cached price, already in
// InputCostPerSample) once a request and the output once a sample. With
// one sample a request it is SamplesPerStep × CostPerSample; with n a
// request the prompt's part shrinks n-fold (at least one request a step);
// auto takes k a request. Billing every sample's prompt (the old formula)
// fails the n = 4 and auto cases.
func TestPlanBillsThePromptOncePerRequest(t *testing.T) {
	t.Parallel()
	const p, k, steps = 0.9, 3, 1000
	// A sample: $0.0010 of prompt (some of it cached), $0.0002 of output.
	e := calibrate.Estimate{P: p, Low: p, ValidRate: 1, CostPerSample: 0.0012, InputCostPerSample: 0.0010}
	s := laws.ExpectedSamples(p, k)

	one := e.PlanAt(k, steps)
	assert.InDelta(t, s, one.RequestsPerStep, 1e-12)
	assert.InDelta(t, s*0.0012, one.CostPerStep, 1e-12)
	assert.InDelta(t, s*0.0012*steps, one.Cost, 1e-9)

	e.SamplesPerCall = 4
	four := e.PlanAt(k, steps)
	assert.InDelta(t, max(1, s/4), four.RequestsPerStep, 1e-12)
	assert.InDelta(t, max(1, s/4)*0.0010+s*0.0002, four.CostPerStep, 1e-12)
	assert.InDelta(t, four.CostPerStep*steps, four.Cost, 1e-9)
	assert.InDelta(t, four.Cost, four.CostLow, 1e-9, "Low = P here")
	assert.Less(t, four.Cost, one.Cost/2)

	e.SamplesPerCall = maker.SamplesPerCallAuto
	auto := e.PlanAt(k, steps)
	assert.InDelta(t, s/k, auto.RequestsPerStep, 1e-12)
	assert.InDelta(t, s/k*0.0010+s*0.0002, auto.CostPerStep, 1e-12)

	// Never fewer than one request a step: many samples a request, a
	// short race.
	e.SamplesPerCall = 64
	assert.InDelta(t, 1, e.PlanAt(k, steps).RequestsPerStep, 1e-12)
}
