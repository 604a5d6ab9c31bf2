package benchmarks

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/mdap-go/mdap/vote/rivals"
	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/stat/distuv"
)

// The fidelity grid.
var (
	fidelityPs = []float64{0.6, 0.75, 0.9, 0.99}
	fidelityKs = []int{1, 2, 3, 5}
)

// spreadRivals is the "spread" error model: wrong replies uniform over
// eight wrong answers (the sim's default).
const spreadRivals = 8

// FidelityCell is one (path, rivals, p, k) cell: measured votes per step
// and wrong winners against the exact laws.
type FidelityCell struct {
	// Path is "race" (vote.Race over the sim alone) or "hanoi" (the whole
	// Hanoi pipeline on the sim: prompt, sim, parse, key, vote, apply).
	Path string `json:"path"`
	// Rivals is 1 (every error the same wrong answer) or 8 (errors spread
	// uniformly over eight).
	Rivals int     `json:"rivals"`
	P      float64 `json:"p"`
	K      int     `json:"k"`
	// Votes is the valid votes per step, with its interval.
	Votes Mean `json:"votes"`
	// Theory is laws.ExpectedSamples (one rival) or
	// rivals.ExpectedSamples (eight).
	Theory float64 `json:"theory"`
	// ClosedForm is laws.ExpectedSamples, the one-rival closed form, for
	// comparison on the spread rows.
	ClosedForm float64 `json:"closed_form"`
	// RelDiff is Votes.Mean/Theory - 1; Z the difference in standard
	// errors.
	RelDiff float64 `json:"rel_diff"`
	Z       float64 `json:"z"`
	// Draws2pc is how many steps put the 95% interval within 2% of
	// theory at the measured spread.
	Draws2pc int `json:"draws_2pc"`
	// Wrong is the share of steps a wrong answer won; WrongTheory is
	// 1 - PStep (one rival) or 1 - rivals.PStep (eight).
	Wrong       Rate    `json:"wrong"`
	WrongTheory float64 `json:"wrong_theory"`
	// requests and samples are the hanoi path's provider requests and
	// launched samples (TestFidelityUnchangedBySamplesPerCall).
	requests, samples int
}

// Match reports whether the cell agrees with theory: votes within 3
// standard errors, and the theoretical wrong rate inside the measured
// rate's 3-standard-error Wilson interval (3 standard errors, not 1.96:
// 64 cells are checked at once).
func (c FidelityCell) Match() bool {
	return math.Abs(c.Z) < 3 && c.Wrong.Within3(c.WrongTheory)
}

// DifficultyRow is one setting of the difficulty experiment.
type DifficultyRow struct {
	Spread    float64 `json:"difficulty_spread"`
	HardAgree float64 `json:"hard_agree"`
	// Members is 1 for one model, n for an ensemble of n sims seeded
	// differently (so with independent hard steps).
	Members int `json:"members"`
	// Strategy is "sequential" in the fidelity suite, or a strategy's name.
	Strategy       string  `json:"strategy"`
	Steps          int     `json:"steps"`
	SamplesPerStep float64 `json:"samples_per_step"`
	Wrong          Rate    `json:"wrong"`
	// Theory is the wrong rate without a spread (1 - rivals.PStep at the
	// mean p); Bound is the mean over the Beta distribution of steps of
	// the one-rival wrong rate 1 - PStep(p, k): an upper bound with a
	// spread (one rival is the worst case), and the exact rate on the hard
	// steps when HardAgree is 1.
	Theory float64 `json:"theory"`
	Bound  float64 `json:"bound"`
}

// FidelityResult is the fidelity suite's result.
type FidelityResult struct {
	// RaceSteps and HanoiDisks, HanoiSeeds size the two paths.
	RaceSteps  int `json:"race_steps"`
	HanoiDisks int `json:"hanoi_disks"`
	HanoiSeeds int `json:"hanoi_seeds"`
	// Cells holds every (path, rivals, p, k).
	Cells []FidelityCell `json:"cells"`
	// The difficulty experiment: mean p DifficultyP, k = laws.KMin for
	// DifficultyPlanSteps steps at target 0.95.
	DifficultyP         float64         `json:"difficulty_p"`
	DifficultyK         int             `json:"difficulty_k"`
	DifficultyPlanSteps int             `json:"difficulty_plan_steps"`
	Difficulty          []DifficultyRow `json:"difficulty"`
}

// difficultySettings are the (spread, hard-agree, members) rows.
var difficultySettings = []struct {
	spread, agree float64
	members       int
}{
	{0, 0, 1}, {0.1, 0, 1}, {0.1, 1, 1}, {0.1, 1, 3}, {0.2, 0, 1}, {0.2, 1, 1}, {0.2, 1, 3},
}

const (
	difficultyP      = 0.99
	difficultyPlan   = 1_048_575 // the paper's 20-disk run
	difficultyTarget = 0.95
)

func runFidelity(ctx context.Context, o Options, tick func()) (*FidelityResult, error) {
	res := &FidelityResult{RaceSteps: 20_000, HanoiDisks: 10, HanoiSeeds: 2}
	diffSteps := 100_000
	if o.Quick {
		res.RaceSteps, res.HanoiDisks, res.HanoiSeeds, diffSteps = 1_000, 7, 1, 10_000
	}
	k, err := laws.KMin(difficultyPlan, difficultyP, difficultyTarget)
	if err != nil {
		return nil, err
	}
	res.DifficultyP, res.DifficultyK, res.DifficultyPlanSteps = difficultyP, k, difficultyPlan

	type job struct {
		path   string
		rivals int
		p      float64
		k      int
	}
	var jobs []job
	for _, path := range []string{"race", "hanoi"} {
		for _, rivals := range []int{1, spreadRivals} {
			for _, p := range fidelityPs {
				for _, k := range fidelityKs {
					jobs = append(jobs, job{path, rivals, p, k})
				}
			}
		}
	}
	res.Cells = make([]FidelityCell, len(jobs))
	res.Difficulty = make([]DifficultyRow, len(difficultySettings))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.workers())
	for i, j := range jobs {
		g.Go(func() error {
			var err error
			if j.path == "race" {
				res.Cells[i], err = fidelityRace(gctx, o.Seed, res.RaceSteps, j.rivals, j.p, j.k)
			} else {
				res.Cells[i], err = fidelityHanoi(gctx, o.Seed, res.HanoiDisks, res.HanoiSeeds, j.rivals, j.p, j.k)
			}
			tick()
			return err
		})
	}
	for i, s := range difficultySettings {
		g.Go(func() error {
			var err error
			res.Difficulty[i], err = difficultyRun(gctx, o.Seed, diffSteps, s.spread, s.agree, s.members, k)
			tick()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return res, nil
}

// fidelityUnits is the number of progress ticks of the fidelity suite.
func fidelityUnits() int {
	return 2*2*len(fidelityPs)*len(fidelityKs) + len(difficultySettings)
}

func simFor(seed uint64, p float64, rivals int) sim.Config {
	return sim.Config{Seed: seed, P: p, WrongAnswers: rivals}
}

// theory returns the expected votes and the wrong-winner rate for a cell.
func theory(p float64, k, wrongAnswers int) (votes, wrong float64, err error) {
	r := rivals.Spread{N: wrongAnswers}
	if votes, err = rivals.ExpectedSamples(p, k, r); err != nil {
		return 0, 0, err
	}
	right, err := rivals.PStep(p, k, r)
	return votes, 1 - right, err
}

func newCell(path string, rivals int, p float64, k int, votes accum, wrong, steps int) (FidelityCell, error) {
	th, wth, err := theory(p, k, rivals)
	if err != nil {
		return FidelityCell{}, err
	}
	m := votes.result()
	return FidelityCell{
		Path: path, Rivals: rivals, P: p, K: k, Votes: m, Theory: th,
		ClosedForm: laws.ExpectedSamples(p, k),
		RelDiff:    m.Mean/th - 1, Z: m.Z(th), Draws2pc: m.DrawsFor(th, 0.02),
		Wrong: newRate(wrong, steps), WrongTheory: wth,
	}, nil
}

func cellSeed(seed uint64, p float64, k, rivals int) uint64 {
	return seed ^ math.Float64bits(p) ^ uint64(k)<<40 ^ uint64(rivals)<<48
}

// fidelityRace runs steps sequential races on the sim alone.
func fidelityRace(ctx context.Context, seed uint64, steps, rivals int, p float64, k int) (FidelityCell, error) {
	model, err := stepModel(simFor(cellSeed(seed, p, k, rivals), p, rivals), 1)
	if err != nil {
		return FidelityCell{}, err
	}
	var votes accum
	wrong := 0
	for step := range steps {
		res, err := raceStep(ctx, vote.Config{K: k, Parallel: 1}, model, step)
		if err != nil {
			return FidelityCell{}, err
		}
		votes.add(float64(res.Valid))
		if !res.Winner {
			wrong++
		}
	}
	return newCell("race", rivals, p, k, votes, wrong, steps)
}

// fidelityHanoi runs Towers of Hanoi through the whole pipeline.
// fidelitySamplesPerCall is the hanoi cells' Solver.SamplesPerCall (a
// test sets it: the cells must not change with several samples per
// request).
var fidelitySamplesPerCall = 1

func fidelityHanoi(ctx context.Context, seed uint64, disks, seeds, rivals int, p float64, k int) (FidelityCell, error) {
	var votes accum
	wrong, steps, requests, samples := 0, 0, 0, 0
	for s := range seeds {
		model, err := sim.New(hanoi.Oracle{}, simFor(cellSeed(seed, p, k, rivals)+uint64(s), p, rivals))
		if err != nil {
			return FidelityCell{}, err
		}
		task, err := hanoi.New(disks)
		if err != nil {
			return FidelityCell{}, err
		}
		solver := &maker.Solver{
			Config:   maker.Config{Vote: vote.Config{K: k, MaxSamples: 1 << 20}, SamplesPerCall: fidelitySamplesPerCall},
			Model:    model,
			Progress: func(e maker.Event) { votes.add(float64(e.Record.Valid)) },
		}
		rep, err := solver.Solve(ctx, task)
		if err != nil {
			return FidelityCell{}, fmt.Errorf("benchmarks: fidelity hanoi p=%v k=%d: %w", p, k, err)
		}
		wrong += task.WrongSteps()
		steps += rep.Steps
		requests += rep.Usage.Requests
		samples += rep.Launched
	}
	c, err := newCell("hanoi", rivals, p, k, votes, wrong, steps)
	c.requests, c.samples = requests, samples
	return c, err
}

// difficultyRun runs steps sequential races at margin k on a model with
// per-step difficulty.
func difficultyRun(ctx context.Context, seed uint64, steps int, spread, agree float64, members, k int) (DifficultyRow, error) {
	cfg := sim.Config{Seed: seed + 1000, P: difficultyP, WrongAnswers: spreadRivals, DifficultySpread: spread, HardAgree: agree}
	model, err := stepModel(cfg, members)
	if err != nil {
		return DifficultyRow{}, err
	}
	row := DifficultyRow{Spread: spread, HardAgree: agree, Members: members, Strategy: "sequential", Steps: steps}
	samples, wrong := 0, 0
	for step := range steps {
		res, err := raceStep(ctx, vote.Config{K: k, Parallel: 1}, model, step)
		if err != nil {
			return row, err
		}
		samples += res.Launched
		if !res.Winner {
			wrong++
		}
	}
	row.SamplesPerStep = float64(samples) / float64(steps)
	row.Wrong = newRate(wrong, steps)
	row.Theory, row.Bound, err = difficultyTheory(difficultyP, k, spread)
	return row, err
}

var boundCache sync.Map // [3]float64 → [2]float64

// difficultyTheory returns the wrong rate at mean p without a spread
// (eight spread rivals) and the one-rival bound averaged over the Beta
// distribution of steps (CDF differences on a grid of 4000 cells).
func difficultyTheory(p float64, k int, spread float64) (theory, bound float64, err error) {
	key := [3]float64{p, float64(k), spread}
	if v, ok := boundCache.Load(key); ok {
		b := v.([2]float64)
		return b[0], b[1], nil
	}
	right, err := rivals.PStep(p, k, rivals.Spread{N: spreadRivals})
	if err != nil {
		return 0, 0, err
	}
	theory = 1 - right
	if spread == 0 {
		bound = 1 - laws.PStep(p, k)
	} else {
		nu := 1/spread - 1
		beta := distuv.Beta{Alpha: p * nu, Beta: (1 - p) * nu}
		const cells = 4000
		prev := 0.0
		for i := 1; i <= cells; i++ {
			x := float64(i) / cells
			c := beta.CDF(x)
			if i == cells {
				c = 1
			}
			mid := (float64(i) - 0.5) / cells
			bound += (c - prev) * (1 - laws.PStep(mid, k))
			prev = c
		}
	}
	boundCache.Store(key, [2]float64{theory, bound})
	return theory, bound, nil
}
