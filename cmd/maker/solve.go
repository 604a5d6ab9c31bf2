package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/mdap-go/mdap/benchmarks"
	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/budget"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/maker/progress"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/cobra"
	"github.com/tmc/langchaingo/llms"
)

// solveSummary is the --json output of maker solve.
type solveSummary struct {
	batch.Summary
	TasksFile string `json:"tasks_file"`
	Results   string `json:"results"`
	State     string `json:"state,omitempty"`
	Error     string `json:"error,omitempty"`
	// --nats: the workers quarantined for answers that lost far more
	// often than their peers', over every task solved here.
	Quarantined []cluster.Quarantined `json:"quarantined,omitempty"`
}

// solveFlags are maker solve's flags: the run flags, the tools, and the
// batch's own, most of them set straight into the library's settings
// (batch.Builtin, batch.LimitConfig, batch.Runner), which check
// themselves; the tagged fields are solve's own (flagbind).
type solveFlags struct {
	run        runFlags
	tools      toolFlags
	builder    batch.Builtin
	limits     batch.LimitConfig
	runner     batch.Runner
	ui         uiFlag
	roles      roleFlags // --model-ROLE of decomposition lines
	Out        string    `flag:"out" usage:"results FILE: one JSON line per finished task (required; appended to, never rewritten)"`
	Spec       string    `flag:"spec" usage:"the spec FILE of every line that names no task: a file of {\"id\": ..., \"input\": {...}} lines runs one spec over many inputs"`
	State      string    `flag:"state" usage:"state DIR: one journal per task, so an interrupted task resumes (created if missing)"`
	JSON       bool      `flag:"json" usage:"print a JSON summary on stdout"`
	SpendChart string    `flag:"spend-chart" usage:"write an SVG chart of the batch's spend over this run to FILE when it ends (dollars spent in all runs against seconds, and the --max-cost cap)"`
	Queue      string    `flag:"queue" usage:"with --nats: the batch's task queue on the engine, where its coordinators meet (default solve-HASH, a hash of the tasks file and the settings); a run key (maker nats run add NAME) serves the queue NAME only"`
}

// solveFlagOf names the flag of each field of batch.Builtin,
// batch.LimitConfig and batch.Runner that maker solve sets; Builtin's
// Config fields are configFlagOf's.
var solveFlagOf = flagbind.Names(map[string]string{"Root": "root", "Tools": "tools"}, batch.LimitConfig{}, batch.Runner{})

func newSolve() *cobra.Command {
	// Its defaults: 4 tasks at once, 16 calls in flight, a rate-limited
	// call tried again 3 times after the shared pause before it counts as
	// a provider error.
	f := &solveFlags{runner: batch.Runner{Concurrency: 4}, limits: batch.LimitConfig{MaxInFlight: 16, Retries: 3}}
	cmd := &cobra.Command{
		Use:     "solve TASKS.jsonl --out RESULTS.jsonl",
		Short:   "Solve a file of tasks, many at a time, into a results file of JSON lines",
		Long:    help("solve"),
		Example: example("solve"),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case args[0] == "-" && f.run.modelsFile == "-":
				return usageErr("the tasks and --models both on standard input: give one of them as a file")
			case args[0] == "-" && f.run.nats.URL != "":
				return usageErr("--nats with tasks on standard input: coordinators share a tasks file by its name and content; give a file")
			}
			if err := f.check(cmd); err != nil {
				return err
			}
			return f.solve(cmd, args[0])
		},
	}
	f.register(cmd)
	f.ui.register(cmd)
	return cmd
}

func (f *solveFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	flagbind.Bind(fs, f)
	flagbind.Bind(fs, &f.limits)
	flagbind.Bind(fs, &f.runner)
	fs.IntVar(&f.run.cfg.MaxSteps, "max-steps", 0, "stop a task after that many steps (0: no limit; a task's \"max_steps\" replaces it)")
	f.run.register(cmd)
	f.roles = registerRoleFlags(fs, " in multiply, sort and problem lines", " (one over --nats); a real model, with a real --model")
	f.run.obs.register(fs, true)
	f.tools.register(cmd, "", &f.run.cfg.ToolDeclaration)
	fs.Lookup("root").Usage = `folder granted to the file tools of spec tasks (default: each spec file's folder; a task's "root" replaces it); they work in the spec's "root" inside it`
	fs.Lookup("seed").Usage = `simulated model: seed of every random draw (a task's "seed" replaces it)`
	// Flags of the shared run set that solve refuses: its --help does not
	// offer them (TestSolveHelpListsOnlyWhatSolveTakes).
	for _, name := range notForSolve {
		_ = fs.MarkHidden(name)
	}
	fs.Lookup("k").Usage = "voting margin: a step is decided when one answer leads every other by k votes, a fixed number (a task's \"k\" replaces it)"
	fs.Lookup("rerun-pending").Usage = "resume a task whose journal ends with a pending side-effect tool call by running that call again"
}

// notForSolve are the run flags maker solve refuses.
var notForSolve = []string{"journal", "resume", "resume-or-start", "structured", "verbose", "target", "k-floor", "k-max"}

// check refuses flags that do not go together, then what the run flags'
// and the batch's settings refuse, said in flags: nothing is written on a
// refusal.
func (f *solveFlags) check(cmd *cobra.Command) error {
	fs, run := cmd.Flags(), &f.run
	if err := f.roles.checkSolve(run); err != nil {
		return err
	}
	if run.Settings.Margin.Auto {
		return usageErr("--k auto applies to maker hanoi and maker run: give maker solve a fixed --k")
	}
	for _, name := range notForSolve[:5] {
		switch {
		case !fs.Changed(name):
		case name == "structured" || name == "verbose":
			return usageErr("--%s does not apply to maker solve yet; use it with maker run or maker hanoi", name)
		default:
			return usageErr("--%s does not apply to maker solve: --state DIR keeps one journal per task, and running the same command again resumes", name)
		}
	}
	run.jnl.PerTask = true
	if err := run.validate(cmd); err != nil {
		return err
	}
	switch {
	case run.jnl.Unsigned && f.State == "" && run.nats.URL == "":
		return usageErr("--journal-unsigned applies to the tasks' journals: give --state DIR (or --nats)")
	case f.Queue != "" && run.nats.URL == "":
		return usageErr("--queue names a task queue on the NATS engine: give --nats URL too, or leave it out")
	case f.Queue != "" && cluster.CheckRunName(f.Queue) != nil:
		return usageErr("--queue %q: a queue name is 1 to 64 letters, digits, '-' or '_'", f.Queue)
	case run.nats.URL != "" && f.State != "":
		return usageErr("--state does not apply with --nats: each task's journal is kept on the engine, where any coordinator resumes it")
	case f.Out == "":
		return usageErr("--out FILE is required: the results file, one JSON line per finished task (created if missing, appended to if it exists)")
	}
	if err := positiveFlags(fs, "concurrency"); err != nil {
		return err
	}
	if f.Queue != "" {
		run.nats.Run = f.Queue // a credentials folder gives the queue's run key, runs/QUEUE.nk
	}
	if f.SpendChart != "" {
		if fi, err := os.Stat(filepath.Dir(f.SpendChart)); err != nil || !fi.IsDir() {
			return usageErr("--spend-chart %s: its folder %s does not exist; give a file in an existing folder", f.SpendChart, filepath.Dir(f.SpendChart))
		}
	}
	b := &f.builder
	// Budget: batchRunner's, one across runs; Escalation: solve's, with its model (run.validate checked it).
	b.Config, b.Seed, b.Root, b.Tools = run.config(solverWith{}), run.Sim.Seed, f.tools.root, f.tools.selection
	b.Escalation = nil
	f.runner.Build = b.Build
	for _, err := range []error{b.Validate(), f.limits.Validate(), f.runner.Validate()} {
		if err := fieldUsageErr(err, solveFlagOf, "solve"); err != nil {
			return err
		}
	}
	return nil
}

// solve runs the tasks of path and prints the summary.
func (f *solveFlags) solve(cmd *cobra.Command, path string) (err error) {
	jobs, err := batch.ReadTasks(path, cmd.InOrStdin(), f.Spec) // refuses a file with none
	if err != nil {
		return usageErr("%w", err)
	}
	run, stderr := &f.run, cmd.ErrOrStderr()
	if err := run.obs.start(cmd.Context(), "maker", stderr); err != nil {
		return err
	}
	defer run.obs.stop(cmd.Context())
	run.Client.MaxInFlight = f.limits.MaxInFlight
	f.builder.Observer = run.obs.solverObserver() // once the telemetry is up
	f.builder.Model, err = batchModel(run, stderr)
	defer run.closeNATS() // after the store and the journals
	// --escalate, its model opened as maker run opens it, never over --nats.
	f.builder.Escalation = run.cfg.Escalation
	if esc := run.Settings.Model; err == nil && esc != "" {
		g := *run
		g.Models, g.nats.URL = []string{esc}, ""
		// refused as maker run refuses it, when both are opened once for the batch (not sim, not over --nats)
		if f.builder.EscalationModel, err = batchModel(&g, stderr); err == nil && run.nats.URL == "" && esc != "sim" && !slices.Contains(run.Models, "sim") {
			err = f.builder.CheckSharedEscalation()
		}
		if err != nil {
			err = usageErr("--escalate-model: %w", err)
		}
	}
	if err != nil {
		return err
	}
	decompBatch(run, f.roles, &f.builder, cmd.Flags())
	queue := ""
	if run.nats.URL != "" {
		if queue, err = run.batchQueue(cmd.Context(), path, f.Queue); err != nil {
			return err
		}
	}
	store, err := batch.OpenStore(f.Out, f.State)
	if err != nil {
		return usageErr("%w", err)
	}
	if store.UnsignedJournals = run.jnl.Unsigned; store.TornBytes() > 0 {
		fmt.Fprintf(stderr, "maker: note: %s ended with a torn line of %s (a write cut short by a crash); it was dropped and that task runs again\n", f.Out, words.Plural(store.TornBytes(), "byte"))
	}
	defer func() {
		if cerr := store.Close(); cerr != nil && err == nil {
			err = failed(cerr)
		}
	}()
	progress, finish := progress.Batch(stderr, run.Settings.Progress, len(jobs))
	r, spend := f.batchRunner(store, progress, stderr)
	defer f.ui.attachBatch(cmd, run, path, jobs, store, &r)()
	sum, runErrV := f.runBatch(cmd, queue, jobs, r, store)
	finish()
	if spend != nil {
		if err := benchmarks.WriteSpendChart(f.SpendChart, spend.End(), run.MaxCost, fmt.Sprintf("maker solve %s: the batch's spend", path)); err != nil {
			fmt.Fprintf(stderr, "maker: the spend chart: %v\n", err)
			if runErrV == nil {
				runErrV = err
			}
		}
	}
	interrupted := runErrV != nil && cmd.Context().Err() != nil && !errors.Is(runErrV, batch.ErrWrite)
	if err := f.report(cmd.OutOrStdout(), path, sum, runErrV, interrupted); err != nil {
		return err
	}
	// Failed (1; 130 when interrupted, as run says of any failure once the
	// context is done), or nil when every task was solved.
	if err := sum.Outcome(runErrV, interrupted, f.summaryText(path)); err != nil {
		return failed(err)
	}
	return nil
}

// batchRunner is the batch's runner over store, reporting to progress;
// spend is the --spend-chart recorder (nil without it).
func (f *solveFlags) batchRunner(store *batch.Store, progress func(batch.Progress), stderr io.Writer) (r batch.Runner, spend *batch.SpendTrace) {
	run := &f.run
	r = f.runner
	// One budget for the whole batch across runs (it only counts without
	// --max-cost): the runner credits it with what earlier runs spent;
	// with --nats, where each task runs as a batch of one, batch.Book does.
	f.builder.Budget = budget.New(run.MaxCost)
	if run.nats.URL == "" {
		r.Budget = f.builder.Budget
	}
	r.Limits, _ = batch.NewLimits(f.limits) // checked by check
	// The batch's probes, queue and cap; the solvers it builds are
	// watched through batch.Builtin's Observer.
	run.watchRun(&run.obs, false)
	r.Build, r.Store, r.Fault = f.builder.Build, store, cluster.IsFault
	r.Progress, r.Logger = batch.RecordProgress(run.obs.observer().BatchRecorder(), progress), run.obs.warnLogger(stderr)
	if f.SpendChart != "" {
		spend = batch.NewSpendTrace(f.builder.Budget) // set with --nats too
		r.Progress = spend.Wrap(r.Progress)
	}
	return r, spend
}

// runBatch runs jobs with r, in process or over the NATS engine
// (cluster.Coordinator.SolveBatch on queue, batchQueue), in the batch's
// span.
func (f *solveFlags) runBatch(cmd *cobra.Command, queue string, jobs []batch.Job, r batch.Runner, store *batch.Store) (batch.Summary, error) {
	run := &f.run
	ctx, endSpan := run.obs.tel.Span(cmd.Context(), observe.SpanBatch)
	defer endSpan()
	if run.nats.URL == "" {
		return r.Run(ctx, jobs)
	}
	book := batch.OpenBook(f.builder.Budget, store, jobs)
	r.Build = book.Wrap(batch.NewGauge(run.obs.observer().BatchRecorder(), cluster.IsFault, jobs, store).Wrap(r.Build))
	sum, err := run.coord.SolveBatch(ctx, cluster.BatchConfig{Queue: queue, Jobs: jobs, Runner: r, Store: store, Concurrency: r.Concurrency,
		Notef: notef(cmd.ErrOrStderr(), "maker solve")})
	if err != nil && ctx.Err() == nil {
		err = failed(fmt.Errorf("--nats: %w", err))
	}
	return sum, book.Finish(&sum, jobs, err)
}

// report prints the summary of a batch: as JSON with --json, whose
// error (a value JSON cannot say, a failed write) fails the command.
func (f *solveFlags) report(w io.Writer, path string, sum batch.Summary, runErr error, interrupted bool) error {
	if !f.JSON {
		sum.WriteText(w, f.summaryText(path))
		return nil
	}
	report := solveSummary{Summary: sum, TasksFile: path, Results: f.Out, State: f.State}
	if f.run.drawer != nil {
		report.Quarantined = f.run.drawer.Quarantined()
	}
	switch {
	case interrupted: // a run error once the context is done
		report.Error = "interrupted"
	case runErr != nil:
		report.Error = runErr.Error()
	}
	return writeJSON(w, report)
}

// summaryText is what the batch's summary and outcome say beside its
// numbers: the files, where the journals are, the cap.
func (f *solveFlags) summaryText(path string) batch.SummaryText {
	t := batch.SummaryText{TasksFile: path, Results: f.Out, Cap: f.run.MaxCost, CapName: "--max-cost", KeepSteps: "give --state DIR"}
	switch {
	case f.run.nats.URL != "":
		t.Journals = "on the engine"
	case f.State != "":
		t.Journals = "in " + f.State
	}
	return t
}

// batchModel returns the model function of the built-in builder
// (runsetup.Run.JobModels; over --nats, natsBatchModel), its errors
// --model's.
func batchModel(flags *runFlags, stderr io.Writer) (func(batch.Job, sim.Oracle, uint64) (llms.Model, error), error) {
	if flags.nats.URL != "" {
		return flags.natsBatchModel(stderr)
	}
	open, err := flags.JobModels()
	if err != nil {
		return nil, usageErr("--model %w", err)
	}
	return func(job batch.Job, oracle sim.Oracle, seed uint64) (llms.Model, error) {
		m, err := open(job, oracle, seed)
		if err != nil {
			return nil, usageErr("--model %w", err)
		}
		return m, nil
	}, nil
}
