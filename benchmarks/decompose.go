package benchmarks

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/mdap-go/mdap/internal/stats"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/sourcegraph/conc/pool"
)

// DecomposeResult is the decompose suite's: voted decomposition (mdap's
// first-to-ahead-by-k with the plan's k per role) beside the MAKER
// authors' first-to-K scheme (decompose.StrategyFirstToK) on the same
// simulated models, per problem kind and per-role p, at T 0.95.
type DecomposeResult struct {
	// Target is the plan's T; Rivals each role's distinct wrong answers.
	Target float64 `json:"target"`
	Rivals int     `json:"rivals"`
	// Price is what a sample is charged (gpt-4.1-mini's list prices over
	// the simulated model's token counts).
	Price string `json:"price"`
	// Rows are the cells: problem kind × p × strategy.
	Rows []DecomposeRow `json:"rows"`
}

// DecomposeRow is one cell of the decompose suite.
type DecomposeRow struct {
	// Problem names the kind ("multiply 10×10", "sort 500"); P is every
	// role's p (the simulated model's and the plan's); Strategy "ahead"
	// or "first-to-k".
	Problem  string  `json:"problem"`
	P        float64 `json:"p"`
	Strategy string  `json:"strategy"`
	// Problems ran, Correct of them right (failed runs count wrong).
	Problems int `json:"problems"`
	Correct  int `json:"correct"`
	// Accuracy is Correct/Problems; FailureUpper the one-sided 95%
	// Clopper-Pearson upper bound on the failure rate.
	Accuracy     float64 `json:"accuracy"`
	FailureUpper float64 `json:"failure_upper95"`
	// Samples and Dollars are the mean per problem.
	Samples float64 `json:"samples_per_problem"`
	Dollars float64 `json:"dollars_per_problem"`
	// K is the plan's k of the solve role.
	K int `json:"k_solve"`
}

// decomposeSize is the suite's size: its cells (problem kinds), each
// run at every p.
type decomposeSize struct {
	cells    []decomposeCell
	ps       []float64
	parallel int
}

// decomposeCell is a problem kind: n problems of a family at a size.
type decomposeCell struct {
	family, name string
	size, n      int
}

// decomposeSizes are the cells of every built-in family
// (problems.Builtin.Bench), the --quick ones under quick.
func decomposeSizes(quick bool) decomposeSize {
	sz := decomposeSize{ps: []float64{0.9, 0.95, 0.99}, parallel: 16}
	if quick {
		sz.parallel = 8
	}
	for _, b := range problems.Builtins() {
		sizes, n := b.Bench.Sizes, b.Bench.N
		if quick {
			sizes, n = b.Bench.QuickSizes, b.Bench.QuickN
		}
		for _, size := range sizes {
			sz.cells = append(sz.cells, decomposeCell{b.Name(), b.Bench.Label(size), size, n})
		}
	}
	return sz
}

// decomposeSizing is the suite's sizing: a test of Run's bookkeeping, not
// of the suite's figures, sets a tiny one (the quick cells cost tens of
// CPU seconds race-built).
var decomposeSizing = decomposeSizes

func decomposeUnits(quick bool) int {
	sz := decomposeSizing(quick)
	return len(sz.cells) * len(sz.ps) * 2
}

// decomposeTarget is the suite's T.
const decomposeTarget = 0.95

// runDecompose runs every cell: each problem seeded by (seed, index), the
// same problems and the same simulated models for both strategies.
func runDecompose(ctx context.Context, o Options, tick func()) (*DecomposeResult, error) {
	return runDecomposeSized(ctx, o.Seed, decomposeSizing(o.Quick), tick)
}

func runDecomposeSized(ctx context.Context, seed0 uint64, sz decomposeSize, tick func()) (*DecomposeResult, error) {
	price, ok := models.BuiltinPrice("openai", "gpt-4.1-mini")
	if !ok {
		return nil, fmt.Errorf("no built-in price for gpt-4.1-mini")
	}
	res := &DecomposeResult{Target: decomposeTarget, Rivals: 3, Price: fmt.Sprintf("gpt-4.1-mini: $%.2f/$%.2f per million input/output tokens", price.InputPerMillion, price.OutputPerMillion)}
	for _, k := range sz.cells {
		for _, p := range sz.ps {
			for _, strategy := range []decompose.Strategy{decompose.StrategyAhead, decompose.StrategyFirstToK} {
				row := DecomposeRow{Problem: k.name, P: p, Strategy: string(strategy), Problems: k.n}
				// Per problem, summed in order after: the figures do not
				// depend on which problem finished first.
				samples, dollars, right := make([]float64, k.n), make([]float64, k.n), make([]bool, k.n)
				var mu sync.Mutex
				pl := pool.New().WithErrors().WithContext(ctx).WithMaxGoroutines(sz.parallel)
				for i := range k.n {
					pl.Go(func(ctx context.Context) error {
						seed := seed0*1_000_003 + uint64(i)
						input, err := problems.Generate(k.family, seed, k.size)
						if err != nil {
							return err
						}
						opts := problems.Options{
							Settings: decompose.Settings{Strategy: strategy, Target: decomposeTarget, Seed: seed, P: allRolesP(p)},
							Sim:      decompose.SimConfig{Seed: seed, Roles: problems.SimRoles(decompose.SimRole{P: p, Rivals: 3})},
						}
						opts.Settings.Solver.Price = price
						r, err := problems.Solve(ctx, k.family, input, opts)
						if r == nil {
							return err // a refused setting: a bug of the suite
						}
						if ctx.Err() != nil {
							return ctx.Err()
						}
						samples[i], dollars[i] = float64(r.Samples), r.Cost
						right[i] = err == nil && r.Correct != nil && *r.Correct
						mu.Lock()
						row.K = r.Plan.K[decompose.RoleSolve]
						mu.Unlock()
						return nil
					})
				}
				if err := pl.Wait(); err != nil {
					return nil, err
				}
				var sumS, sumD float64
				for i := range k.n {
					sumS += samples[i]
					sumD += dollars[i]
					if right[i] {
						row.Correct++
					}
				}
				row.Accuracy = float64(row.Correct) / float64(row.Problems)
				row.FailureUpper = stats.UpperBound(float64(row.Problems-row.Correct), float64(row.Problems), 0.95)
				row.Samples, row.Dollars = sumS/float64(row.Problems), sumD/float64(row.Problems)
				res.Rows = append(res.Rows, row)
				tick()
			}
		}
	}
	return res, nil
}

func allRolesP(p float64) map[decompose.Role]float64 {
	out := map[decompose.Role]float64{}
	for _, r := range decompose.Roles {
		out[r] = p
	}
	return out
}

// writeDecompose renders the decompose suite's table.
func writeDecompose(b *strings.Builder, d *DecomposeResult) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Voted decomposition (decompose suite)\n\n")
	w("Long multiplication and sorting solved by voted decomposition (`maker multiply`, `maker sort`), on the simulated model of every role (each role's p below, %d rivals per role), T %v. **ahead** is mdap's: every decision first-to-ahead-by-k with each role's k from the plan, discriminator candidates shuffled per vote. **first-to-k** is the MAKER authors' scheme (2K−1 proposals, a discriminator votes an index first-to-K, candidates in the same order), run with the same K on the same models. Dollars at %s. The failure bound is the one-sided 95%% Clopper-Pearson upper bound over the problems. Chart: `decompose.svg`.\n\n", d.Rivals, d.Target, d.Price)
	w("| problem | p | strategy | problems | correct | accuracy | failure ≤ (95%%) | k (solve) | samples/problem | $/problem |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range d.Rows {
		w("| %s | %v | %s | %d | %d | %.3f | %.4f | %d | %.0f | %.5f |\n", r.Problem, r.P, r.Strategy, r.Problems, r.Correct, r.Accuracy, r.FailureUpper, r.K, r.Samples, r.Dollars)
	}
	w("\n")
}
