package calibrate_test

import (
	"context"
	"fmt"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
)

// Before a million-step run: sample 100 steps of 20-disk Hanoi, 30 times
// each, on a model that is right 99% of the time and always makes the
// same mistake.
func ExampleRun() {
	model, err := sim.New(hanoi.Oracle{}, sim.Config{P: 0.99, WrongAnswers: 1, Seed: 1})
	if err != nil {
		panic(err)
	}
	steps, err := calibrate.Hanoi(20)
	if err != nil {
		panic(err)
	}
	rep, err := calibrate.Run(context.Background(), calibrate.Config{
		Steps:        steps,
		Solver:       &maker.Solver{Config: maker.Config{Price: maker.Price{InputPerMillion: 0.4, OutputPerMillion: 1.6}}, Model: model},
		StepsSampled: 100,
		Samples:      30,
		Target:       0.95,
	})
	if err != nil {
		panic(err)
	}
	e := rep.All
	fmt.Printf("p = %.4f, 95%% interval [%.4f, %.4f]\n", e.P, e.Low, e.High)
	fmt.Printf("pairs of wrong answers to one step: %d, the same answer in %d\n", e.Repeat.Pairs, e.Repeat.Same)
	// A million steps at 0.95: a tail of hard steps as small as 5e-8 would
	// sink the run, and 100 sampled steps cannot exclude one, so the plan
	// is undecided and says how many more steps would settle it.
	if e.Undecided {
		fmt.Printf("undecided for %d steps: k %d if the steps are alike, none if they differ as much as the samples allow (spread ICC up to %.3f); about %d more steps would settle it\n", rep.Total, e.KBest, e.ICCHigh, e.MoreSteps)
	}
	// Output:
	// p = 0.9917, 95% interval [0.9875, 0.9947]
	// pairs of wrong answers to one step: 5, the same answer in 5
	// undecided for 1048575 steps: k 4 if the steps are alike, none if they differ as much as the samples allow (spread ICC up to 0.038); about 12 more steps would settle it
}

// Fixed k beside adaptive k on the simulated model: the rows of the
// benchmarks.
func ExampleCompareHanoi() {
	cfg := sim.DefaultConfig()
	cfg.P, cfg.WrongAnswers = 0.95, 1
	rows, err := calibrate.CompareHanoi(context.Background(), calibrate.Comparison{
		Disks: 8, Sim: cfg, Seeds: []uint64{1, 2}, Fixed: []int{2}, Auto: []adaptive.Policy{{Target: 0.95}},
	})
	if err != nil {
		panic(err)
	}
	for _, s := range calibrate.Summarize(rows) {
		fmt.Printf("%s: %.2f samples per step, %d wrong steps in %d runs\n", s.Policy, s.SamplesPerStep, s.WrongSteps, s.Runs)
	}
	// Output:
	// k=2: 2.19 samples per step, 1 wrong steps in 2 runs
	// auto(target=0.95 steps=255 floor=4 max=30 confidence=0.975 window=500): 4.65 samples per step, 0 wrong steps in 2 runs
}
