package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/maker/runsummary"
	"github.com/mdap-go/mdap/maker/sim"
)

// runTotals is what every run command's --json summary says of the run
// (runsummary.Totals, and the flags' own); each command adds its task's own
// fields around it.
type runTotals struct {
	runsummary.Totals
	K     int    `json:"k"`
	Model string `json:"model"`
	Seed  uint64 `json:"seed,omitempty"`
	Error string `json:"error,omitempty"`
	// --nats: the distinct worker identities a step's winning votes came
	// from at least (--min-workers as settled), and the workers
	// quarantined for answers that lost far more often than their peers'.
	MinWorkers  int                   `json:"min_workers,omitempty"`
	Quarantined []cluster.Quarantined `json:"quarantined,omitempty"`
}

// totals summarises a run of s that ended with rep and runErr.
func (f *runFlags) totals(ctx context.Context, s *maker.Solver, rep maker.Report, runErr error) runTotals {
	t := runTotals{Totals: runsummary.Of(s, rep), K: f.cfg.Vote.K, Model: f.Shown()}
	if f.drawer != nil {
		t.MinWorkers, t.Quarantined = max(f.minVoters, 1), f.drawer.Quarantined()
	}
	if slices.Contains(f.Models, "sim") {
		t.Seed = f.Sim.Seed
	}
	if runErr != nil {
		t.Error = runErr.Error()
		if ctx.Err() != nil {
			t.Error = "interrupted"
		}
	}
	return t
}

// solveTask solves task with the solver the flags describe, with what
// the command adds (with) and its watchers (with.watch): the telemetry
// started, a progress bar of with.steps, --ui attached. Then it prints
// the run's summary, as JSON with asJSON: finish makes it from the run's
// totals and report (its --json summary, its text headline, and whether the task was
// solved, or why not); the report's text and --k auto's estimate follow
// the headline. It returns the command's error; then the view stops, the
// journal closes (its error fails the command) and the NATS connection
// after it. A journal that does not fit is a usage error with no summary.
func (f *runFlags) solveTask(cmd *cobra.Command, ui *uiFlag, task maker.Task, oracle sim.Oracle, with solverWith, asJSON bool, finish func(runTotals, maker.Report) (sum any, headline string, solved bool, why string)) (err error) {
	ctx := cmd.Context()
	if err := f.obs.start(ctx, "maker", cmd.ErrOrStderr()); err != nil {
		return err
	}
	defer f.obs.stop(ctx)
	with.watch = ctx
	s, err := f.solver(oracle, cmd.ErrOrStderr(), with)
	defer f.closeNATS() // after the journal's Close, deferred below
	if err != nil {
		return err
	}
	if s.Journal != nil {
		defer func() {
			if cerr := s.Journal.Close(); cerr != nil && err == nil {
				err = failed(cerr)
			}
		}()
	}
	defer ui.attach(cmd, s, task, f)()
	solveCtx := ctx
	if o, ok := task.(observe.Oracle); ok { // Towers of Hanoi: the wrong steps' metric
		solveCtx = observe.WithOracle(ctx, o)
	}
	rep, runErrV := s.Solve(solveCtx, task)
	f.endBar()
	if err := runErr(runErrV); isUsage(err) {
		return err // a journal that does not fit: no run to summarise
	}
	t := f.totals(ctx, s, rep, runErrV)
	sum, headline, solved, why := finish(t, rep)
	var jsonErr error
	if out := cmd.OutOrStdout(); asJSON {
		jsonErr = writeJSON(out, sum)
	} else {
		fmt.Fprint(out, headline, runsummary.Text(rep))
		if t.PEstimate != nil {
			fmt.Fprintf(out, "k auto: %s\n", t.PEstimate)
		}
	}
	switch {
	case runErrV != nil && ctx.Err() != nil:
		return interrupted(f.jnl.Path)
	case runErrV != nil:
		return runErr(runErrV)
	case jsonErr != nil:
		return jsonErr
	case !solved:
		return failed(fmt.Errorf("not solved: %s", why))
	}
	return nil
}
