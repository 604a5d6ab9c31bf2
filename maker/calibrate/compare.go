package calibrate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"golang.org/x/sync/errgroup"
)

// Comparison runs Towers of Hanoi on the simulated model with fixed and
// adaptive margins, seed by seed: the experiment behind "adaptive k
// beside fixed k" (samples per step, wrong steps), for tests and the
// benchmarks.
type Comparison struct {
	// Disks is the size of the task (TotalSteps steps).
	Disks int
	// Sim is the simulated model; its Seed is replaced by each of Seeds.
	Sim sim.Config
	// Seeds are the sim seeds to run each policy with.
	Seeds []uint64
	// Fixed are the fixed margins to run.
	Fixed []int
	// Auto are the adaptive policies to run; their Steps default to the
	// task's.
	Auto []adaptive.Policy
	// Vote is the rest of each race's configuration (K is replaced).
	Vote vote.Config
	// Concurrency is the number of runs at once; default GOMAXPROCS.
	Concurrency int
}

// Row is one run of a Comparison.
type Row struct {
	// Policy is "k=3" or the adaptive policy's String.
	Policy string `json:"policy"`
	Seed   uint64 `json:"seed"`
	Steps  int    `json:"steps"`
	// SamplesPerStep is samples launched per decided step (cancelled ones
	// included: they were paid for).
	SamplesPerStep float64 `json:"samples_per_step"`
	// WrongSteps counts steps whose winner was not the correct answer.
	WrongSteps int  `json:"wrong_steps"`
	Solved     bool `json:"solved"`
	// KHistogram counts the steps by their margin.
	KHistogram map[int]int `json:"k_histogram"`
	// P is the run's own estimate of p (adaptive policies only).
	P *adaptive.PEstimate `json:"p_estimate,omitempty"`
}

// Summary is a policy's rows together.
type Summary struct {
	Policy string `json:"policy"`
	Runs   int    `json:"runs"`
	// SamplesPerStep is the mean over all steps of all runs.
	SamplesPerStep float64 `json:"samples_per_step"`
	// WrongSteps sums the runs' wrong steps; WrongStepRate is per step;
	// RunsWithWrongSteps counts the runs that had any.
	WrongSteps         int     `json:"wrong_steps"`
	WrongStepRate      float64 `json:"wrong_step_rate"`
	RunsWithWrongSteps int     `json:"runs_with_wrong_steps"`
}

// CompareHanoi runs every policy of c on every seed, Concurrency runs at a
// time, and returns one row per run: the fixed margins first, in order,
// then the adaptive policies, each over the seeds in order. A step that
// fails (a spent budget) ends that run, whose row then has Solved false.
// Errors: ErrConfig for a bad Disks, Sim or policy; ctx.Err(). Cost: one
// whole run per row.
func CompareHanoi(ctx context.Context, c Comparison) ([]Row, error) {
	total := hanoi.TotalSteps(c.Disks)
	if total == 0 {
		return nil, fmt.Errorf("%w: Disks %d, want 1 to %d", ErrConfig, c.Disks, hanoi.MaxDisks)
	}
	if err := c.Sim.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	type job struct {
		k    int
		auto *adaptive.Policy
		seed uint64
	}
	var jobs []job
	for _, k := range c.Fixed {
		for _, seed := range c.Seeds {
			jobs = append(jobs, job{k: k, seed: seed})
		}
	}
	for _, a := range c.Auto {
		if a.Steps == 0 {
			a.Steps = total
		}
		a, err := a.WithDefaults()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		for _, seed := range c.Seeds {
			jobs = append(jobs, job{auto: &a, seed: seed})
		}
	}
	rows := make([]Row, len(jobs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, cmpOr(c.Concurrency, runtime.GOMAXPROCS(0))))
	for i, j := range jobs {
		g.Go(func() error {
			cfg := c.Sim
			cfg.Seed = j.seed
			model, err := sim.New(hanoi.Oracle{}, cfg)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrConfig, err)
			}
			task, err := hanoi.New(c.Disks)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrConfig, err)
			}
			run, row := maker.Config{Vote: c.Vote}, Row{Seed: j.seed}
			if j.auto != nil {
				run.AdaptiveK = j.auto
				row.Policy = j.auto.String()
			} else {
				run.Vote.K = j.k
				row.Policy = fmt.Sprintf("k=%d", j.k)
			}
			s := &maker.Solver{Config: run, Model: model}
			rep, err := s.Solve(gctx, task)
			if cerr := gctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil && !errors.Is(err, maker.ErrStep) {
				return fmt.Errorf("%w: %s: %w", ErrConfig, row.Policy, err)
			}
			row.Steps, row.SamplesPerStep, row.WrongSteps = rep.Steps, rep.SamplesPerStep(), task.WrongSteps()
			row.Solved = err == nil && task.Solved()
			row.KHistogram = maps.Clone(rep.KHistogram)
			if j.auto != nil {
				e := j.auto.Estimate(rep)
				row.P = &e
			}
			rows[i] = row
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return rows, nil
}

// Summarize groups rows by policy, in the order the policies first
// appear.
func Summarize(rows []Row) []Summary {
	var order []string
	by := map[string]*Summary{}
	samples := map[string]float64{}
	steps := map[string]int{}
	for _, r := range rows {
		s, ok := by[r.Policy]
		if !ok {
			s = &Summary{Policy: r.Policy}
			by[r.Policy] = s
			order = append(order, r.Policy)
		}
		s.Runs++
		s.WrongSteps += r.WrongSteps
		if r.WrongSteps > 0 {
			s.RunsWithWrongSteps++
		}
		samples[r.Policy] += r.SamplesPerStep * float64(r.Steps)
		steps[r.Policy] += r.Steps
	}
	out := make([]Summary, 0, len(order))
	for _, p := range order {
		s := by[p]
		if n := steps[p]; n > 0 {
			s.SamplesPerStep = samples[p] / float64(n)
			s.WrongStepRate = float64(s.WrongSteps) / float64(n)
		}
		out = append(out, *s)
	}
	return out
}

// Histogram renders a k histogram as "k=2:3881 k=3:200".
func Histogram(h map[int]int) string {
	var s string
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if s != "" {
			s += " "
		}
		s += fmt.Sprintf("k=%d:%d", k, h[k])
	}
	return s
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
