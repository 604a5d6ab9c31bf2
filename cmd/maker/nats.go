package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// natsJournalPrefix marks a --journal on the engine: nats:RUN.
const natsJournalPrefix = "nats:"

// natsRun is the --nats part of runFlags: where samples are drawn and
// journals kept when the run goes through the engine
// (cluster.Coordinator).
type natsRun struct {
	// nats holds the flags' settings of the coordinator (--nats,
	// --nats-creds, --nats-keep, --min-workers; its Run is --journal
	// nats:RUN's, or maker solve --queue's: the run whose key, runs/RUN.nk,
	// signs it in from a credentials folder).
	nats cluster.CoordinatorConfig
	// minVoters and followVoters are what the coordinator settled
	// --min-workers to (cluster.Coordinator.Draw).
	minVoters    int
	followVoters func(context.Context) int
	coord        *cluster.Coordinator
	drawer       *cluster.Drawer
}

func (n *natsRun) registerNATS(fs *pflag.FlagSet) {
	n.nats = cluster.CoordinatorConfig{Keep: cluster.DefaultRetention, Creds: cluster.ClientCreds{PathName: "--nats-creds"}}
	flagbind.Bind(fs, &n.nats)
}

// clusterFlagOf names the flag of each field of maker/cluster's settings
// that the commands set (CoordinatorConfig, EngineConfig and its
// ProvisionConfig, WorkerConfig, StockClusterConfig; most by their tags):
// a field has one flag in every command that sets it.
var clusterFlagOf = flagbind.Names(map[string]string{"Provision.Replicas": "replicas", "Replicas": "replicas", "Creds.Identity": "identity"},
	cluster.EngineConfig{}, cluster.CoordinatorConfig{}, cluster.AgentConfig{}, cluster.WorkerConfig{}, cluster.StockClusterConfig{})

// validateNATS checks --nats and what it changes
// (cluster.CoordinatorConfig.Validate): --journal nats:RUN and
// --min-workers need it; the model's server and the simulated model's
// latency are the workers' business.
func (f *runFlags) validateNATS(cmd *cobra.Command) error {
	run, onEngine := strings.CutPrefix(f.jnl.Path, natsJournalPrefix)
	if onEngine {
		f.nats.Run = run
	}
	err := f.coordinatorConfig().Validate()
	fe := fielderr.As(err)
	f.minVoters = f.nats.MinWorkers // what the vote needs until the engine is asked (Draw)
	switch {
	case fe != nil && fe.Fields[0].Name == "MinWorkers":
		return fieldUsageErr(err, clusterFlagOf, "nats")
	case f.nats.URL == "" && f.nats.MinWorkers != 0:
		return usageErr("--min-workers counts the workers of a run over --nats: give --nats URL too, or leave it out")
	case f.nats.URL == "" && onEngine:
		return usageErr("--journal %s is kept on the NATS engine: give --nats URL too", f.jnl.Path)
	case f.nats.URL == "":
		return nil
	case fe != nil && fe.Fields[0].Name == "Run":
		return usageErr("--journal %s: the run name after nats: must be 1 to 64 letters, digits, '-' or '_'", f.jnl.Path)
	case err != nil:
		return fieldUsageErr(err, clusterFlagOf, "nats")
	}
	if name := given(cmd.Flags(), "base-url", "latency", "latency-sigma"); name != "" {
		return usageErr("--%s applies to the workers' model with --nats: give it to maker worker", name)
	}
	return nil
}

// coordinatorConfig is the cluster.CoordinatorConfig the flags set.
func (f *runFlags) coordinatorConfig() cluster.CoordinatorConfig {
	c := f.nats
	c.Creds.Run, c.Timeout, c.Unsigned = c.Run, f.Client.Timeout, f.jnl.Unsigned
	return c
}

// route is the model the flags name, as workers and coordinators meet on
// it (runsetup.Run.Route).
func (f *runFlags) route(oracle sim.Oracle) (string, error) {
	route, err := f.Route(oracle)
	if err != nil {
		return "", simUsageErr(err)
	}
	return route, nil
}

// engineErr is err, of the engine's library, as the command's exit
// status says it: nil is nil; a *cluster.FieldFailure is a failure (1)
// that its field's flag, if any, begins; a refused setting (a *fielderr.Error,
// said in flags) or one wrapping one of usage (a name or credential
// refused, which names its flag) is bad input (2), else a failure (1)
// that flag, when given, begins.
func engineErr(flag string, err error, usage ...error) error {
	var ff *cluster.FieldFailure
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ff) && ff.Field == "":
		return failed(ff.Err)
	case errors.As(err, &ff):
		return failed(fmt.Errorf("--%s: %w", clusterFlagOf[ff.Field], ff.Err))
	case fielderr.As(err) != nil:
		return fieldUsageErr(err, clusterFlagOf, "nats")
	}
	for _, u := range usage {
		if errors.Is(err, u) {
			return usageErr("%w", err)
		}
	}
	if flag != "" {
		err = fmt.Errorf("%s: %w", flag, err)
	}
	return failed(err)
}

// draw connects once per command (cluster.OpenCoordinator) and opens the
// Drawer of route ("" for a batch, cluster.Coordinator.DrawNoting),
// whose warnings and notes go to stderr.
func (f *runFlags) draw(route string, stderr io.Writer) error {
	if f.coord == nil {
		cfg := f.coordinatorConfig()
		cfg.Logger = f.obs.warnLogger(stderr)
		c, err := cluster.OpenCoordinator(cfg)
		if err != nil {
			return engineErr("--nats", err, cluster.ErrConfig)
		}
		f.coord = c
	}
	d, err := f.coord.DrawNoting(context.Background(), route, notef(stderr, "maker: note"))
	if err != nil {
		return engineErr("--nats", err)
	}
	f.drawer, f.minVoters, f.followVoters = d, f.coord.MinVoters(), f.coord.FollowVoters()
	return nil
}

// natsModel is the model of a coordinator: samples drawn by the workers
// of the flags' route, within --timeout each, queueing included.
func (f *runFlags) natsModel(oracle sim.Oracle, stderr io.Writer) (llms.Model, error) {
	route, err := f.route(oracle)
	if err != nil {
		return nil, err
	}
	if err := f.draw(route, stderr); err != nil {
		return nil, err
	}
	return f.drawer.SpecModel(route, f.oneModel(), f.cfg.Price.InputPerMillion, f.cfg.Price.OutputPerMillion)
}

// natsJournal opens --journal nats:RUN
// (cluster.Coordinator.JournalNoting).
func (f *runFlags) natsJournal(stderr io.Writer) (*journal.Journal, error) {
	j, err := f.coord.JournalNoting(context.Background(), f.jnl.Resume, f.jnl.Path, notef(stderr, "maker: note"))
	if errors.Is(err, cluster.ErrEngine) {
		return nil, failed(fmt.Errorf("--journal: %w", err))
	}
	if err != nil {
		return nil, usageErr("--journal: %w", err)
	}
	return j, nil
}

// closeNATS closes what --nats opened (cluster.Coordinator.Close), after
// the journal (closed by the caller before).
func (n *natsRun) closeNATS() { _ = n.coord.Close() }

// engineProbe checks the NATS connection, when the run has one.
func (n *natsRun) engineProbe(context.Context) error { return n.coord.Connected() }

// natsCmd is maker nats: the engine's settings the flags set (Token
// from $MDAP_NATS_TOKEN), and --log and the telemetry.
type natsCmd struct {
	cfg  cluster.EngineConfig
	logs bool
	obs  watchFlags
}

func newNATS() *cobra.Command {
	n := &natsCmd{cfg: cluster.DefaultEngine()}
	cmd := &cobra.Command{
		Use:     "nats",
		Short:   "Run an embedded NATS server with JetStream for workers and coordinators",
		Long:    help("nats"),
		Example: example("nats"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := n.check(cmd.Flags()); err != nil {
				return err
			}
			return n.run(cmd)
		},
	}
	n.register(cmd.Flags())
	cmd.AddCommand(newNATSLs(), newNATSRm(), newNATSProvision(), newNATSWorker(), newNATSRun(), newNATSConfig())
	return cmd
}

func (n *natsCmd) register(fs *pflag.FlagSet) {
	flagbind.Bind(fs, &n.cfg)
	fs.BoolVar(&n.logs, "log", false, "the server's log on stderr")
	flagbind.Bind(fs, &n.cfg.Provision)
	fs.IntVar(&n.cfg.Provision.Replicas, "replicas", 1, "replicas of every stream and bucket: 1, since the embedded server is a single node (for more, run a cluster of stock nats-server nodes and maker nats provision --replicas N)")
	n.obs.register(fs, false)
	fs.Lookup("metrics-addr").Usage = "serve the engine's metrics (its streams' messages and bytes, consumers, workers pulling, clients, the agent's requests: docs/observe.md) on /metrics, with /healthz and /readyz, on [HOST]:PORT; a port alone listens on 127.0.0.1 only; another host needs a bearer token in $" + metricsTokenEnv
}

// check refuses bad flags (usage errors): cluster.EngineConfig.Validate's
// refusals name their flags.
func (n *natsCmd) check(fs *pflag.FlagSet) error {
	if err := checkEngineFlags(fs, &n.cfg.Provision); err != nil {
		return err
	}
	n.cfg.Token = os.Getenv(cluster.TokenEnv)
	if n.cfg.Auth == cluster.AuthToken && (fs.Changed("ack-wait") || fs.Changed("max-deliver")) {
		return usageErr("--ack-wait and --max-deliver are the engine's settings with --auth roles; with --auth token each worker sets its own (maker worker --ack-wait)")
	}
	err := n.cfg.Validate()
	if fe := fielderr.As(err); fe != nil && fe.Fields[0].Name == "Token" { // no flag: $MDAP_NATS_TOKEN's
		return usageErr("--auth token: set $%s to the token clients must send", cluster.TokenEnv)
	}
	return fieldUsageErr(err, clusterFlagOf, "nats")
}

// run serves until the command's context ends (cluster.RunEngine).
// Flags first, files after: check has refused bad flags before run
// writes any credentials.
func (n *natsCmd) run(cmd *cobra.Command) error {
	stderr := cmd.ErrOrStderr()
	if err := n.obs.start(cmd.Context(), "maker-nats", stderr); err != nil {
		return err
	}
	defer n.obs.stop(cmd.Context())
	var logger *slog.Logger
	if n.logs {
		logger = n.obs.logger(stderr, nil)
	}
	var metricsErr error
	err := cluster.RunEngine(cmd.Context(), n.cfg, logger, cmd.OutOrStdout(), notef(stderr, "maker nats"), func(e *cluster.Engine) error {
		n.obs.probe("nats", func(context.Context) error { return e.Ready() })
		metricsErr = n.obs.observer().ObserveEngine(e.Server.Figures)
		return metricsErr
	})
	switch {
	case metricsErr != nil:
		return failed(fmt.Errorf("--metrics-addr: the engine's metrics: %w", metricsErr))
	case errors.Is(err, cluster.ErrAuth):
		return usageErr("--creds: %w", err)
	}
	return engineErr("", err, cluster.ErrConfig) // check ran Validate: a field refused now is the store's or the folder's path
}

// notef says a note of the command what on w, a line each.
func notef(w io.Writer, what string) func(format string, args ...any) {
	return func(format string, args ...any) { fmt.Fprintf(w, what+": "+format+"\n", args...) }
}

// checkEngineFlags refuses engine settings out of range: an explicit 0
// of any (the library's default; leave the flag out for it), then what
// cluster.ProvisionConfig.Validate refuses. --route-quota and
// --drawer-quota left out are the library's default quotas (at most
// --max-routes, and the engine's Drawers).
func checkEngineFlags(fs *pflag.FlagSet, c *cluster.ProvisionConfig) error {
	if err := positiveFlags(fs, "ack-wait", "max-deliver", "key-jobs", "job-bytes", "route-quota", "drawer-quota", "max-routes", "replicas",
		"drawer-every", "max-drawers", "reply-keep", "reply-bytes", "run-key-bytes"); err != nil {
		return err
	}
	if !fs.Changed("route-quota") {
		c.RouteQuota = 0 // the library's default: at most MaxRoutes
	}
	if !fs.Changed("drawer-quota") {
		c.DrawerQuota = 0 // the library's default: at most MaxDrawers
	}
	return fieldUsageErr(c.Validate(), clusterFlagOf, "nats")
}

// natsBatchModel is maker solve's model function with --nats: one Drawer
// for every task, each task's samples drawn by the workers of its route
// (cluster.Drawer.JobModels). The Drawer warns on stderr of a worker it
// quarantines.
func (f *runFlags) natsBatchModel(stderr io.Writer) (func(batch.Job, sim.Oracle, uint64) (llms.Model, error), error) {
	if err := f.draw("", stderr); err != nil {
		return nil, err
	}
	return f.drawer.JobModels(f.Run), nil
}

// batchQueue is the task queue of maker solve --nats: queue (--queue),
// or one named after the tasks file and the settings
// (cluster.Coordinator.OpenBatchQueue), opened once so that a credential
// it refuses (a run key of another queue) is a usage error before
// anything is written.
func (f *runFlags) batchQueue(ctx context.Context, tasksFile, queue string) (string, error) {
	queue, err := f.coord.OpenBatchQueue(ctx, tasksFile, queue, f.Run)
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &pathErr):
		return "", usageErr("%w", err)
	case fielderr.As(err) != nil: // the route's: a setting of the simulated model
		return "", simUsageErr(err)
	case errors.Is(err, cluster.ErrAuth):
		return "", usageErr("--nats: %w; with a run key give --queue NAME, the run it was issued for", err)
	case err != nil:
		return "", failed(fmt.Errorf("--nats: %w", err))
	}
	return queue, nil
}
