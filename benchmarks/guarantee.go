package benchmarks

import (
	"context"
	"fmt"
	"strings"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
)

// GuaranteeResult is the guarantee suite: the share of whole runs with no
// wrong step, under real error structures (one rival, drift, steps of
// different difficulty, hard steps that agree), for the features that
// choose k or handle a step for the user, beside a fixed k.
type GuaranteeResult struct {
	Target float64        `json:"target"`
	Rows   []GuaranteeRow `json:"rows"`
}

// GuaranteeRow is one policy on one scenario over Runs seeds.
type GuaranteeRow struct {
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	Disks    int    `json:"disks"`
	// Success is the runs with no wrong step (and solved), with its 95%
	// Wilson interval.
	Success        Rate    `json:"success"`
	SamplesPerStep float64 `json:"samples_per_step"`
	WrongSteps     int     `json:"wrong_steps"`
	// Escalated counts the escalated steps over all runs (escalation rows).
	Escalated int `json:"escalated,omitempty"`
}

// guaranteeScenarios is the suite's size: seeds per row.
func guaranteeSeeds(quick bool) int {
	if quick {
		return 10 // the CI size: the intervals are wide
	}
	return 100
}

func guaranteeUnits() int { return 4 }

func seedList(n int, base uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = base + uint64(i)
	}
	return out
}

// compareRows turns CompareHanoi's rows into a row per policy.
func compareRows(scenario string, disks int, rows []calibrate.Row) []GuaranteeRow {
	var out []GuaranteeRow
	idx := map[string]int{}
	ok := map[string]int{}
	samples := map[string]float64{}
	steps := map[string]int{}
	for _, r := range rows {
		i, seen := idx[r.Policy]
		if !seen {
			i = len(out)
			idx[r.Policy] = i
			out = append(out, GuaranteeRow{Scenario: scenario, Policy: r.Policy, Disks: disks})
		}
		out[i].Success.N++
		if r.Solved && r.WrongSteps == 0 {
			ok[r.Policy]++
		}
		out[i].WrongSteps += r.WrongSteps
		samples[r.Policy] += r.SamplesPerStep * float64(r.Steps)
		steps[r.Policy] += r.Steps
	}
	for i := range out {
		p := out[i].Policy
		out[i].Success = newRate(ok[p], out[i].Success.N)
		if steps[p] > 0 {
			out[i].SamplesPerStep = samples[p] / float64(steps[p])
		}
		if strings.HasPrefix(p, "auto(") {
			out[i].Policy = "k auto"
		}
	}
	return out
}

func runGuarantee(ctx context.Context, o Options, tick func()) (*GuaranteeResult, error) {
	return runGuaranteeN(ctx, o, tick, guaranteeSeeds(o.Quick))
}

// runGuaranteeN is the suite over n seeds per row.
func runGuaranteeN(ctx context.Context, o Options, tick func(), n int) (*GuaranteeResult, error) {
	const target = 0.95
	res := &GuaranteeResult{Target: target}
	base := o.Seed*1000 + 1
	oneRival := func(p float64) sim.Config {
		c := sim.DefaultConfig()
		c.P, c.WrongAnswers = p, 1
		return c
	}
	compare := func(name string, disks int, cfg sim.Config, fixed []int, auto bool) error {
		c := calibrate.Comparison{Disks: disks, Sim: cfg, Seeds: seedList(n, base), Fixed: fixed, Concurrency: o.workers()}
		if auto {
			c.Auto = []maker.AdaptiveK{{Target: target}}
		}
		rows, err := calibrate.CompareHanoi(ctx, c)
		if err != nil {
			return err
		}
		res.Rows = append(res.Rows, compareRows(name, disks, rows)...)
		tick()
		return nil
	}
	// Adaptive k: p 0.8, one rival.
	k08, err := vote.KMin(1023, 0.8, target)
	if err != nil {
		return nil, err
	}
	if err := compare("adaptive: p 0.8, one rival", 10, oneRival(0.8), []int{k08}, true); err != nil {
		return nil, err
	}
	// Drift: p 0.99, then 0.9 from step 512.
	drift := oneRival(0.99)
	drift.Drift = []sim.PChange{{Step: 512, P: 0.9}}
	k099, err := vote.KMin(1023, 0.99, target)
	if err != nil {
		return nil, err
	}
	if err := compare("drift: p 0.99 then 0.9 from step 512", 10, drift, []int{k099}, true); err != nil {
		return nil, err
	}
	// Calibration under a spread: the recommended k, and the k of the
	// mean p.
	spread := oneRival(0.98)
	spread.DifficultySpread = 0.02
	steps, err := calibrate.Hanoi(10)
	if err != nil {
		return nil, err
	}
	cal := spread
	cal.Seed = base + 7777
	model, err := sim.New(hanoi.Oracle{}, cal)
	if err != nil {
		return nil, err
	}
	crep, err := calibrate.Run(ctx, calibrate.Config{Steps: steps, Solver: &maker.Solver{Model: model}, StepsSampled: 200, Samples: 20, Seed: base})
	if err != nil {
		return nil, err
	}
	fixed := []int{crep.All.KMin}
	if kp, err := vote.KMin(1023, crep.All.P, target); err == nil && kp != crep.All.KMin {
		fixed = append(fixed, kp)
	}
	if err := compare(fmt.Sprintf("calibration: p 0.98, spread 0.02 (recommended k %d)", crep.All.KMin), 10, spread, fixed, false); err != nil {
		return nil, err
	}
	// Escalation: spread 0.2, hard steps agree, k = 3, contested steps
	// to a stronger model.
	hard := oneRival(0.99)
	hard.DifficultySpread, hard.HardAgree = 0.2, 1
	strongCfg := sim.DefaultConfig()
	strongCfg.P, strongCfg.Seed = 0.999, base+99
	strong, err := sim.New(hanoi.Oracle{}, strongCfg)
	if err != nil {
		return nil, err
	}
	for _, esc := range []*maker.Escalation{nil, {Policy: maker.EscalateModel, After: 6, Model: strong}} {
		row := GuaranteeRow{Scenario: "escalation: p 0.99, spread 0.2, hard steps agree", Policy: "k=3", Disks: 8}
		if esc != nil {
			row.Policy = "k=3, contested steps to a p 0.999 model"
		}
		ok, samples, stepsN := 0, 0, 0
		for _, seed := range seedList(n, base) {
			cfg := hard
			cfg.Seed = seed
			m, err := sim.New(hanoi.Oracle{}, cfg)
			if err != nil {
				return nil, err
			}
			task, err := hanoi.New(8)
			if err != nil {
				return nil, err
			}
			s := &maker.Solver{Model: m, Escalation: esc}
			s.Vote.K = 3
			rep, err := s.Solve(ctx, task)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err == nil && task.Solved() && task.WrongSteps() == 0 {
				ok++
			}
			row.WrongSteps += task.WrongSteps()
			row.Escalated += rep.Escalated
			samples += rep.Launched
			stepsN += rep.Steps
		}
		row.Success = newRate(ok, n)
		if stepsN > 0 {
			row.SamplesPerStep = float64(samples) / float64(stepsN)
		}
		res.Rows = append(res.Rows, row)
	}
	tick()
	return res, nil
}

func writeGuarantee(b *strings.Builder, g *GuaranteeResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Guarantee: whole runs right, under real error structures\n\n")
	w("The share of runs with no wrong step (95%% Wilson interval) against the target %g, each policy on the same seeds.\n\n", g.Target)
	w("| scenario | policy | disks | runs right (95%% CI) | samples/step | wrong steps | escalated |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range g.Rows {
		w("| %s | %s | %d | %d/%d = %.3f [%.3f, %.3f] | %.2f | %d | %d |\n", r.Scenario, r.Policy, r.Disks, r.Success.Hits, r.Success.N, r.Success.Rate, r.Success.Lo, r.Success.Hi, r.SamplesPerStep, r.WrongSteps, r.Escalated)
	}
	w("\n")
}
