package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// workerModelFlags are the run flags a worker takes: its model.
var workerModelFlags = append([]string{"model", "models", "base-url", "timeout"}, simFlags...)

// workerCmd is maker worker: its flag values, and what check made of
// them for run.
type workerCmd struct {
	flags runFlags
	// cfg holds the worker's settings the flags set (Route, Grace and
	// Logger are run's); cluster.WorkerConfig.Validate checks them.
	cfg      cluster.WorkerConfig
	logLevel string
	obs      watchFlags
	// roles is --roles: the decomposition family whose roles the
	// simulated model plays instead of Towers of Hanoi.
	roles string
	// Set by check.
	level slog.Level
	route string
	model llms.Model
}

func newWorker() *cobra.Command {
	w := &workerCmd{}
	cmd := &cobra.Command{
		Use:     "worker",
		Short:   "Draw samples for coordinators on other machines: a stateless NATS worker",
		Long:    help("worker"),
		Example: example("worker"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := w.check(cmd); err != nil {
				return err
			}
			return w.run(cmd)
		},
	}
	w.register(cmd.Flags())
	return cmd
}

func (w *workerCmd) register(fs *pflag.FlagSet) {
	w.cfg = cluster.WorkerConfig{Inflight: 1, AckWait: cluster.DefaultAckWait, Grace: cluster.DefaultGrace, Creds: natsCreds}
	flagbind.Bind(fs, &w.cfg)
	fs.StringVar(&w.cfg.Creds.Identity, "identity", "", "with a credentials folder as --nats-creds: sign in as the worker identity NAME (its workers/NAME.nk, issued by maker nats worker add NAME); default: the folder's only one")
	fs.StringVar(&w.roles, "roles", "", "with --model sim: play every role of this family's voted decompositions (multiply or sort), for maker solve --nats's lines of it, instead of Towers of Hanoi")
	fs.StringVar(&w.logLevel, "log-level", "info", "log level on stderr: debug (each job's start and end too), info (each redelivered job it takes: a worker died, stalled or handed it back), warn (replies not published, bad jobs) or error")
	w.obs.register(fs, false)
	// The model flags, shared with the run commands (same defaults and
	// checks); the vote and journal flags are the coordinator's.
	all := &cobra.Command{}
	w.flags.register(all)
	for _, f := range workerModelFlags {
		fs.AddFlag(all.Flags().Lookup(f))
	}
}

// check refuses bad flags (usage errors) and opens the model, setting
// level, route and model for run.
func (w *workerCmd) check(cmd *cobra.Command) error {
	if err := w.flags.validate(cmd); err != nil {
		return err
	}
	if w.cfg.URL == "" {
		return usageErr("--nats URL: the NATS server to take jobs from (start one with: maker nats)")
	}
	if err := positiveFlags(cmd.Flags(), "inflight", "ack-wait"); err != nil {
		return err
	}
	if err := fieldUsageErr(w.cfg.Validate(), clusterFlagOf, "worker"); err != nil {
		return err
	}
	var err error
	if w.level, err = parseLogLevel(w.logLevel); err != nil {
		return err
	}
	if len(w.flags.Models) > 1 {
		return usageErr("--model given %d times: a worker serves one model", len(w.flags.Models))
	}
	if cmd.Flags().Changed("roles") {
		return w.checkRoles(cmd)
	}
	if w.route, err = w.flags.route(hanoi.Oracle{}); err != nil {
		return err
	}
	w.model, err = w.flags.openModels(hanoi.Oracle{})
	return err
}

// checkRoles sets the model and route of --roles FAMILY: the simulated
// model of every role of the family (simRoles) at --seed.
func (w *workerCmd) checkRoles(cmd *cobra.Command) error {
	if w.flags.oneModel() != "sim" {
		return usageErr("--roles %s: only the simulated model (--model sim) plays a decomposition's roles from its family; a real --model serves every prompt as it is", w.roles)
	}
	sims, err := problems.SimModels(w.roles, simRoles(&w.flags, cmd.Flags()))
	if err != nil {
		return usageErr("--roles: %w", err)
	}
	w.model = sims.OneModel()
	w.route = maker.ModelIdentity(w.model)
	return nil
}

// run connects to the engine and serves jobs until the command's context
// ends, then prints what the worker did.
func (w *workerCmd) run(cmd *cobra.Command) error {
	grace := w.cfg.Grace
	if grace == 0 && cmd.Flags().Changed("grace") {
		grace = time.Nanosecond // --grace 0 is no grace; the library's zero is its default
	}
	allowDrain(grace) // calls in progress may finish before the watchdog exits
	if err := w.obs.start(cmd.Context(), "maker-worker", cmd.ErrOrStderr()); err != nil {
		return err
	}
	defer w.obs.stop(cmd.Context())
	model := observe.Model(w.obs.observer(), w.model, maker.ModelIdentity(w.model))
	cfg := w.cfg
	cfg.Route, cfg.Grace = w.route, grace
	cfg.Logger = w.obs.logger(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: w.level})
	var observeErr error
	err := cluster.ServeWorker(cmd.Context(), model, cfg, notef(cmd.ErrOrStderr(), "maker worker"), func(wk *cluster.Worker) error {
		w.obs.probe("engine", func(context.Context) error { return wk.Connected() })
		observeErr = w.obs.observer().ObserveWorker(func() (int64, int64) { st := wk.Stats(); return st.Served, st.Failed })
		return observeErr
	})
	if observeErr != nil {
		return failed(observeErr)
	}
	return engineErr("--nats", err, cluster.ErrConfig)
}
