package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryPerModelLimits: each --model of an ensemble carries its own
// ;rpm= and ;inflight= (the library test TestPerModelLimits proves the
// bounds hold per model); the run and calibration take them, and a bad
// value exits 2 naming the field, with no journal written.
func TestBinaryPerModelLimits(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 1, 0.995
	a, baseA := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	b, baseB := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	c := start(t, nil, "hanoi", "--disks", "3", "--json", "--progress", "off",
		"--model", "openai:sim;base="+baseA+";inflight=1;rpm=6000", "--model", "openai:sim;base="+baseB+";inflight=2")
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	require.True(t, c.summary(t).Solved)
	assert.Positive(t, a.Stats().Requests)
	assert.Positive(t, b.Stats().Requests)

	// The plain child (childCLI), as the package's other calibrations:
	// race-built in process its plan is seconds of arithmetic.
	code, _, errOut := childCLI(t, "calibrate", "--disks", "10", "--steps-sampled", "10", "--samples", "10", "--progress", "off",
		"--model", "openai:sim;base="+baseA+";rpm=6000;inflight=2")
	assert.Contains(t, []int{0, 1}, code, "a calibration (1: undecided on 10 of 1,023 steps): %s", errOut)

	dir := t.TempDir()
	for spec, want := range map[string]string{
		"openai:sim;base=" + baseA + ";rpm=0":        "rpm=0: use a positive number of calls per minute",
		"openai:sim;base=" + baseA + ";rpm=lots":     "rpm=lots",
		"openai:sim;base=" + baseA + ";inflight=0":   "inflight=0: use a whole number of calls in flight",
		"openai:sim;base=" + baseA + ";inflight=1.5": "inflight=1.5",
		"sim;inflight=2": "rpm= and inflight= limit a served model",
	} {
		j := filepath.Join(dir, "j.jsonl")
		code, out, errOut := cli(t, "hanoi", "--disks", "3", "--progress", "off", "--journal", j, "--model", spec)
		assert.Equal(t, 2, code, spec)
		assert.Contains(t, errOut, want, spec)
		assert.Empty(t, out, spec)
		_, err := os.Stat(j)
		assert.True(t, os.IsNotExist(err), "%s: nothing written", spec)
	}
}

// TestBinaryCalibrateForecastBillsRequestsAndCache: maker calibrate
// against serve-sim with its prefix cache on and a cached-input price:
// the estimate carries the cached share serve-sim reported and prices it
// at the cached price; with --samples-per-call 4 the plan bills the
// prompt once a request of 4 (at least one a step), and the text says
// what it assumes.
func TestBinaryCalibrateForecastBillsRequestsAndCache(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 1, 0.995
	_, base := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg, Billing: simserver.Billing{CacheMinTokens: 16, CacheBlockTokens: 16}})
	args := []string{"calibrate", "--disks", "10", "--steps-sampled", "8", "--samples", "8", "--progress", "off",
		"--model", "openai:sim=0.4/1.6/0.1", "--base-url", base, "--k", "6"}
	plans := map[string]calibrate.Estimate{}
	for _, per := range []string{"1", "4"} {
		code, js, errOut := childCLI(t, append(args, "--samples-per-call", per, "--json")...)
		require.Contains(t, []int{0, 1}, code, errOut) // 8 of 1,023 steps: likely undecided (exit 1); the plan at --k is what is checked
		var rep calibrate.Report
		require.NoError(t, json.Unmarshal([]byte(js), &rep))
		e := rep.All
		require.NotNil(t, e.AtK)
		assert.Positive(t, e.CachedShare, "serve-sim reported cached tokens")
		cached := e.CachedShare * e.InputTokens
		assert.InDelta(t, ((e.InputTokens-cached)*0.4+cached*0.1)/1e6, e.InputCostPerSample, 1e-12, "cached tokens at the cached price")
		assert.InDelta(t, e.OutputTokens*1.6/1e6, e.CostPerSample-e.InputCostPerSample, 1e-12)
		plans[per] = e
	}
	one, four := plans["1"], plans["4"]
	assert.InDelta(t, one.AtK.SamplesPerStep*one.CostPerSample, one.AtK.CostPerStep, 1e-12)
	reqs := max(1, four.AtK.SamplesPerStep/4)
	assert.InDelta(t, reqs, four.AtK.RequestsPerStep, 1e-12)
	assert.InDelta(t, reqs*four.InputCostPerSample+four.AtK.SamplesPerStep*(four.CostPerSample-four.InputCostPerSample), four.AtK.CostPerStep, 1e-12)
	assert.Less(t, four.AtK.Cost, one.AtK.Cost)
	t.Logf("whole run at the target: $%.4f one sample a request, $%.4f at 4 a request (cached share %.2f)", one.AtK.Cost, four.AtK.Cost, one.CachedShare)

	code, out, errOut := childCLI(t, append(args, "--samples-per-call", "4")...)
	require.Contains(t, []int{0, 1}, code, errOut) // 8 of 1,023 steps: likely undecided (exit 1); the plan at --k is what is checked
	assert.Contains(t, out, "the forecast bills the prompt once a request of 4 samples (--samples-per-call 4, assumed full requests)")
	assert.Contains(t, out, "at the cached-input price (the cached share the provider reported here)")
	t.Logf("%s", out)
}
