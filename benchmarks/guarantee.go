package benchmarks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/evidence"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote/laws"
	"golang.org/x/sync/errgroup"
)

// GuaranteeResult is the guarantee suite: whether the k a user is given
// keeps the promise "the whole run is right with probability at least T",
// shown the project's way (internal/evidence): over many seeds per cell,
// the one-sided 95% upper confidence bound (Clopper-Pearson) on the share
// of runs with a wrong step, beside the target 1 - T. Each cell is an
// error structure (steady p, steps of different difficulty, drift, hard
// steps whose errors agree, one to eight rival answers); each row one way
// of choosing k on it, on the same seeds.
type GuaranteeResult struct {
	// Target is T; Limit is 1 - T, the failure rate each bound must meet.
	Target float64 `json:"target"`
	Limit  float64 `json:"limit"`
	// Confidence is the bounds' one-sided confidence.
	Confidence float64 `json:"confidence"`
	// Seeds is the seeds per cell; MinRuns the fewest runs that can show
	// Limit at all (with no failure): a row with fewer is "not shown"
	// whatever it does.
	Seeds   int             `json:"seeds"`
	MinRuns int             `json:"min_runs"`
	Rows    []GuaranteeRow  `json:"rows"`
	Cells   []GuaranteeCell `json:"cells"`
}

// GuaranteeCell describes one cell: its error structure and task size.
type GuaranteeCell struct {
	Name  string `json:"name"`
	Setup string `json:"setup"`
	Disks int    `json:"disks"`
	// Wall is the cell's wall time (all its rows and calibrations).
	Wall string `json:"wall"`
}

// GuaranteeRow is one way of choosing k on one cell.
type GuaranteeRow struct {
	Cell   string `json:"cell"`
	Policy string `json:"policy"`
	// Seeds is the seeds tried; Runs the runs made (for calibrate's k,
	// the seeds where calibration gave a k); Failures the runs with a
	// wrong step or not solved.
	Seeds    int `json:"seeds"`
	Runs     int `json:"runs"`
	Failures int `json:"failures"`
	// Upper is the one-sided 95% upper bound on the failure rate; Lower
	// the lower one; Verdict compares them with the limit 1 - T.
	Upper   float64          `json:"upper"`
	Lower   float64          `json:"lower"`
	Verdict evidence.Verdict `json:"verdict"`
	// SamplesPerStep is over all steps of all runs.
	SamplesPerStep float64 `json:"samples_per_step"`
	// NoK counts the calibrations that gave no k (refused or undecided);
	// Ks the seeds per k given (calibrate's rows only).
	NoK int         `json:"no_k,omitempty"`
	Ks  map[int]int `json:"ks,omitempty"`
}

// guaranteeTarget is T for every cell.
const guaranteeTarget = 0.95

// The rows' policies that choose k for the user (the others are
// baselines: k_min at a known p).
const (
	policyCalibrate = "calibrate's k"
	policyAuto      = "--k auto"
)

// guaranteeSeeds is the suite's size: seeds per cell. 200 puts a cell
// with no failure at a bound of 0.0149 and lets it meet 5% with up to 4
// failures; the quick size only shows that the suite runs.
func guaranteeSeeds(quick bool) int {
	if quick {
		return 4
	}
	return 200
}

// guaranteeCell is a cell's recipe. fixed names the fixed k beside --k
// auto: "calibrate" (maker calibrate's recommendation, per seed, on the
// same model), or a p whose k_min (laws.KMin) is the fixed k.
type guaranteeCell struct {
	name, setup string
	disks       int
	sim         sim.Config
	calibrate   bool
	kAt         float64 // the p of the fixed k_min when !calibrate
	kWhy        string
}

func guaranteeCells() []guaranteeCell {
	base := func(p float64, rivals int) sim.Config {
		c := sim.DefaultConfig()
		c.P, c.WrongAnswers = p, rivals
		return c
	}
	spread := func(c sim.Config, s, agree float64) sim.Config {
		c.DifficultySpread, c.HardAgree = s, agree
		return c
	}
	drift := func(c sim.Config, at int, p float64) sim.Config {
		c.Drift = []sim.PChange{{Step: at, P: p}}
		return c
	}
	cells := []guaranteeCell{
		{name: "steady p", setup: "--p 0.8 --wrong-answers 1", disks: 10, sim: base(0.8, 1), kAt: 0.8, kWhy: "the true p"},
		{name: "spread 0.05", setup: "--p 0.97 --difficulty-spread 0.05 --wrong-answers 1", disks: 12, sim: spread(base(0.97, 1), 0.05, 0), calibrate: true},
		{name: "spread 0.2", setup: "--p 0.99 --difficulty-spread 0.2 --wrong-answers 8", disks: 12, sim: spread(base(0.99, 8), 0.2, 0), calibrate: true},
		{name: "drift early", setup: "--p 0.99 --p-late 0.9 --p-change-at 100 --wrong-answers 1", disks: 10, sim: drift(base(0.99, 1), 100, 0.9), kAt: 0.99, kWhy: "the early p"},
		{name: "drift late", setup: "--p 0.9999 --p-late 0.8 --p-change-at 920 --wrong-answers 1", disks: 10, sim: drift(base(0.9999, 1), 920, 0.8), kAt: 0.9999, kWhy: "the early p"},
		{name: "agreeing hard steps", setup: "--p 0.99 --difficulty-spread 0.2 --hard-agree 1 --wrong-answers 8", disks: 12, sim: spread(base(0.99, 8), 0.2, 1), calibrate: true},
	}
	for _, r := range []int{1, 3, 8} {
		name := fmt.Sprintf("%d rivals", r)
		if r == 1 {
			name = "1 rival"
		}
		cells = append(cells, guaranteeCell{name: name, setup: fmt.Sprintf("--p 0.9 --wrong-answers %d", r), disks: 12, sim: base(0.9, r), kAt: 0.9, kWhy: "the true p"})
	}
	return cells
}

func guaranteeUnits() int { return len(guaranteeCells()) }

func seedList(n int, base uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = base + uint64(i)
	}
	return out
}

func runGuarantee(ctx context.Context, o Options, tick func()) (*GuaranteeResult, error) {
	return runGuaranteeN(ctx, o, tick, guaranteeSeeds(o.Quick), o.Quick)
}

// smallCalibration caps calibrate's samples at the quick size: its first
// round only (100 steps of 10 samples), so --until-decided adds none.
const smallCalibration = 1_000

// runGuaranteeN is the suite over n seeds per cell; small caps the disks
// at 7 (the quick size).
func runGuaranteeN(ctx context.Context, o Options, tick func(), n int, small bool) (*GuaranteeResult, error) {
	res := &GuaranteeResult{Target: guaranteeTarget, Limit: 1 - guaranteeTarget, Confidence: evidence.Confidence, Seeds: n,
		MinRuns: evidence.MinRuns(1-guaranteeTarget, evidence.Confidence)}
	seeds := seedList(n, o.Seed*100_000+1)
	for _, c := range guaranteeCells() {
		if small {
			c.disks = min(c.disks, 7)
		}
		start := time.Now()
		rows, err := runGuaranteeCell(ctx, o, c, seeds, small)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.name, err)
		}
		res.Rows = append(res.Rows, rows...)
		res.Cells = append(res.Cells, GuaranteeCell{Name: c.name, Setup: c.setup, Disks: c.disks, Wall: time.Since(start).Round(100 * time.Millisecond).String()})
		tick()
	}
	return res, nil
}

// tally is a policy's runs on a cell.
type tally struct {
	runs, failures int
	samples        float64
	steps          int
}

func (t *tally) add(rows []calibrate.Row) {
	for _, r := range rows {
		t.runs++
		if r.WrongSteps > 0 || !r.Solved {
			t.failures++
		}
		t.samples += r.SamplesPerStep * float64(r.Steps)
		t.steps += r.Steps
	}
}

// newGuaranteeRow is a row's figures from its counts: the bounds and the
// verdict against limit.
func newGuaranteeRow(cell, policy string, seeds int, t tally, limit float64) GuaranteeRow {
	r := GuaranteeRow{Cell: cell, Policy: policy, Seeds: seeds, Runs: t.runs, Failures: t.failures,
		Upper:   evidence.Upper(t.failures, t.runs, evidence.Confidence),
		Lower:   evidence.Lower(t.failures, t.runs, evidence.Confidence),
		Verdict: evidence.Judge(t.failures, t.runs, limit)}
	if t.steps > 0 {
		r.SamplesPerStep = t.samples / float64(t.steps)
	}
	return r
}

func runGuaranteeCell(ctx context.Context, o Options, c guaranteeCell, seeds []uint64, small bool) ([]GuaranteeRow, error) {
	limit := 1 - guaranteeTarget
	steps := 1<<c.disks - 1
	compare := func(seeds []uint64, fixed []int, auto bool) ([]calibrate.Row, error) {
		cmp := calibrate.Comparison{Disks: c.disks, Sim: c.sim, Seeds: seeds, Fixed: fixed, Concurrency: o.workers()}
		if auto {
			cmp.Auto = []adaptive.Policy{{Target: guaranteeTarget}}
		}
		return calibrate.CompareHanoi(ctx, cmp)
	}
	var fixedRow GuaranteeRow
	if c.calibrate {
		ks, err := calibrateSeeds(ctx, o, c, seeds, small)
		if err != nil {
			return nil, err
		}
		var t tally
		given := map[int]int{}
		noK := 0
		byK := map[int][]uint64{}
		for i, k := range ks {
			if k == 0 {
				noK++
				continue
			}
			given[k]++
			byK[k] = append(byK[k], seeds[i])
		}
		for _, k := range slices.Sorted(maps.Keys(byK)) {
			rows, err := compare(byK[k], []int{k}, false)
			if err != nil {
				return nil, err
			}
			t.add(rows)
		}
		fixedRow = newGuaranteeRow(c.name, policyCalibrate, len(seeds), t, limit)
		fixedRow.NoK, fixedRow.Ks = noK, given
	} else {
		k, err := laws.KMin(steps, c.kAt, guaranteeTarget)
		if err != nil {
			return nil, err
		}
		rows, err := compare(seeds, []int{k}, false)
		if err != nil {
			return nil, err
		}
		var t tally
		t.add(rows)
		fixedRow = newGuaranteeRow(c.name, fmt.Sprintf("k=%d (k_min at %s)", k, c.kWhy), len(seeds), t, limit)
	}
	rows, err := compare(seeds, nil, true)
	if err != nil {
		return nil, err
	}
	var t tally
	t.add(rows)
	return []GuaranteeRow{fixedRow, newGuaranteeRow(c.name, policyAuto, len(seeds), t, limit)}, nil
}

// calibrateSeeds runs maker calibrate's defaults (100 sampled steps, 10
// samples each, target T) with --until-decided on each seed's model, as a
// user would before the run, following an undecided calibration's advice
// to sample more: the same simulated model (the same per-step
// difficulties) the run then faces. It returns each seed's k_min, 0 where
// calibration gave none (it refused, or stopped undecided at its cap).
// small caps a calibration at smallCalibration samples (the quick size:
// most then stop undecided, and the row says so).
func calibrateSeeds(ctx context.Context, o Options, c guaranteeCell, seeds []uint64, small bool) ([]int, error) {
	steps, err := calibrate.Hanoi(c.disks)
	if err != nil {
		return nil, err
	}
	ks := make([]int, len(seeds))
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(o.workers())
	for i, seed := range seeds {
		g.Go(func() error {
			cfg := c.sim
			cfg.Seed = seed
			model, err := sim.New(hanoi.Oracle{}, cfg)
			if err != nil {
				return err
			}
			cc := calibrate.Config{Steps: steps, Solver: &maker.Solver{Model: model}, Seed: seed, Target: guaranteeTarget, UntilDecided: true}
			if small {
				cc.MaxSamples = smallCalibration
			}
			rep, err := calibrate.Run(ctx, cc)
			if err != nil {
				return fmt.Errorf("calibrate, seed %d: %w", seed, err)
			}
			mu.Lock()
			ks[i] = rep.All.KMin
			mu.Unlock()
			return nil
		})
	}
	return ks, g.Wait()
}

func writeGuarantee(b *strings.Builder, g *GuaranteeResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Guarantee: is the whole run right with probability T?\n\n")
	w("The promise of mdap's first line, checked the project's way: per cell, %d seeds, each a whole run of Towers of Hanoi on the simulated model (where the truth is known); *failures* are runs with a wrong step (or unsolved). The bound is the one-sided %g%% upper confidence bound (Clopper-Pearson, `internal/evidence`) on the failure rate, against the target 1 − T = %g (T = %g): *met* when the bound is at or below it, *not met* when the one-sided %g%% lower bound is above it, *not shown* when neither (a row needs at least %d runs to show %g at all, with no failure). ",
		g.Seeds, 100*g.Confidence, g.Limit, g.Target, 100*g.Confidence, g.MinRuns, g.Limit)
	w("Policies: *k_min at the true p* (or at the early p of a drift: what a calibration before the drop measures) is `laws.KMin`'s k for the run's steps; *calibrate's k* is `maker calibrate --until-decided`'s recommendation with its defaults (100 sampled steps, 10 samples each, then rounds until decided or 200,000 samples), one calibration per seed on the run's own model, then a run at that k (*no k*: calibrations that gave none; the row's runs are the seeds that got one); *--k auto* is `adaptive.Policy` with its defaults. Setups are `maker hanoi` flags; every cell also has the sim's default red-flag rate.\n\n")
	w("| cell | setup | disks | policy | runs | failures | 95%% upper bound | target 1 − T | verdict | samples/step | calibrate: k given (seeds) · no k |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	cells := map[string]GuaranteeCell{}
	for _, c := range g.Cells {
		cells[c.Name] = c
	}
	for _, r := range g.Rows {
		c := cells[r.Cell]
		notes := ""
		if r.Ks != nil || r.NoK > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(r.Ks)) {
				parts = append(parts, fmt.Sprintf("k %d: %d", k, r.Ks[k]))
			}
			if len(parts) == 0 {
				parts = append(parts, "none")
			}
			notes = fmt.Sprintf("%s · no k: %d of %d", strings.Join(parts, ", "), r.NoK, r.Seeds)
		}
		w("| %s | `%s` | %d | %s | %d | %d | %.4f | %g | %s | %.2f | %s |\n", r.Cell, c.Setup, c.Disks, r.Policy, r.Runs, r.Failures, r.Upper, g.Limit, r.Verdict, r.SamplesPerStep, notes)
	}
	var walls []string
	for _, c := range g.Cells {
		walls = append(walls, c.Name+" "+c.Wall)
	}
	w("\nWall time per cell: %s.\n\n", strings.Join(walls, ", "))
}
