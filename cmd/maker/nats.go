package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// The environment variables and the default folder of what a --nats
// client signs in with (maker nats writes the folder with its default
// --store).
const (
	natsTokenEnv    = cluster.TokenEnv
	natsCredsEnv    = cluster.CredsEnv
	defaultCredsDir = cluster.DefaultCredsDir
)

// natsJournalPrefix marks a --journal on the engine: nats:RUN.
const natsJournalPrefix = "nats:"

// setupTimeout bounds connecting and creating streams at start.
const setupTimeout = 30 * time.Second

// natsRun is the --nats part of runFlags: where samples are drawn and
// journals kept when the run goes through the engine
// (cluster.Coordinator).
type natsRun struct {
	natsURL   string
	natsCreds cluster.ClientCreds // --nats-creds; Run is natsRunName
	natsKeep  time.Duration
	// natsRunName is the run whose key (runs/RUN.nk) signs a coordinator
	// in from a credentials folder: --journal nats:RUN's, or maker solve
	// --queue's.
	natsRunName string
	// minWorkers is --min-workers; minVoters and followVoters what the
	// coordinator settled it to (cluster.Coordinator.Draw).
	minWorkers, minVoters int
	followVoters          func(context.Context) int
	coord                 *cluster.Coordinator
	drawer                *cluster.Drawer
}

func (n *natsRun) registerNATS(fs *pflag.FlagSet) {
	fs.StringVar(&n.natsURL, "nats", "", "NATS URL (e.g. nats://127.0.0.1:4222): draw the samples through maker workers instead of calling the model")
	registerNATSCreds(fs, &n.natsCreds)
	fs.DurationVar(&n.natsKeep, "nats-keep", cluster.DefaultRetention, "retention of what this run creates on the engine (its journal, a batch's task queue and results); remove it sooner with maker nats rm RUN")
	fs.IntVar(&n.minWorkers, "min-workers", 0, "with --nats: decide a step only when its winning votes come from at least N distinct worker identities (credentials), spreading each step's samples over the workers; 0 (the default) is 2 while at least 2 worker identities serve the route, else 1, looked at again between steps every 5s (maker solve: any worker); a worker whose answers lose far more often than its peers' is quarantined (see docs/nats.md)")
}

// registerNATSCreds binds --nats-creds to c.Path; c's errors name it.
func registerNATSCreds(fs *pflag.FlagSet, c *cluster.ClientCreds) {
	c.PathName = "--nats-creds"
	fs.StringVar(&c.Path, "nats-creds", "", "the credential to sign in to --nats with: a seed file, or the folder maker nats printed (default $"+natsCredsEnv+", else ./"+defaultCredsDir+" if it exists; $"+natsTokenEnv+" for a server with a token)")
}

// clusterFlagOf names the flag of each field of maker/cluster's settings
// that the commands set (CoordinatorConfig, EngineConfig and its
// ProvisionConfig, WorkerConfig, StockClusterConfig): a field has one
// flag in every command that sets it.
var clusterFlagOf = map[string]string{"URL": "nats", "Keep": "nats-keep", "MinWorkers": "min-workers",
	"Addr": "addr", "Store": "store", "Creds": "creds", "Monitor": "monitor-addr", "Auth": "auth", "Provision.Replicas": "replicas",
	"SharedCoordinator": "shared-coordinator", "SharedWorker": "shared-worker", "AckWait": "ack-wait", "MaxDeliver": "max-deliver",
	"Replicas": "replicas", "KeyJobs": "key-jobs", "JobBytes": "job-bytes", "RouteQuota": "route-quota", "DrawerQuota": "drawer-quota", "MaxRoutes": "max-routes",
	"DrawerEvery": "drawer-every", "MaxDrawers": "max-drawers", "ReplyKeep": "reply-keep", "ReplyBytes": "reply-bytes", "RunKeyBytes": "run-key-bytes",
	"Inflight": "inflight", "Grace": "grace", "Name": "name", "Creds.Identity": "identity",
	"Nodes": "nodes", "Workers": "workers", "BasePort": "base-port"}

// validateNATS checks --nats and what it changes
// (cluster.CoordinatorConfig.Validate): --journal nats:RUN and
// --min-workers need it; the model's server and the simulated model's
// latency are the workers' business.
func (f *runFlags) validateNATS(cmd *cobra.Command) error {
	run, onEngine := strings.CutPrefix(f.jnl.Path, natsJournalPrefix)
	if onEngine {
		f.natsRunName = run
	}
	err := f.coordinatorConfig().Validate()
	fe := fielderr.As(err)
	f.minVoters = f.minWorkers // what the vote needs until the engine is asked (Draw)
	switch {
	case fe != nil && fe.Fields[0].Name == "MinWorkers":
		return fieldUsageErr(err, clusterFlagOf, "nats")
	case f.natsURL == "" && f.minWorkers != 0:
		return usageErr("--min-workers counts the workers of a run over --nats: give --nats URL too, or leave it out")
	case f.natsURL == "" && onEngine:
		return usageErr("--journal %s is kept on the NATS engine: give --nats URL too", f.jnl.Path)
	case f.natsURL == "":
		return nil
	case fe != nil && fe.Fields[0].Name == "Run":
		return usageErr("--journal %s: the run name after nats: must be 1 to 64 letters, digits, '-' or '_'", f.jnl.Path)
	case err != nil:
		return fieldUsageErr(err, clusterFlagOf, "nats")
	}
	for _, name := range []string{"base-url", "latency", "latency-sigma"} {
		if cmd.Flags().Changed(name) {
			return usageErr("--%s applies to the workers' model with --nats: give it to maker worker", name)
		}
	}
	return nil
}

// coordinatorConfig is the cluster.CoordinatorConfig the flags set.
func (f *runFlags) coordinatorConfig() cluster.CoordinatorConfig {
	creds := f.natsCreds
	creds.Run = f.natsRunName
	return cluster.CoordinatorConfig{URL: f.natsURL, Keep: f.natsKeep, MinWorkers: f.minWorkers, Run: f.natsRunName,
		Creds: creds, Timeout: f.open.Timeout, Unsigned: f.jnl.Unsigned}
}

// route is the model the flags name, as workers and coordinators meet on
// it: the simulated model's identity (its seed and every setting that
// changes an answer), or the --model spec.
func (f *runFlags) route(oracle sim.Oracle) (string, error) {
	if f.oneModel() != "sim" {
		return f.oneModel(), nil
	}
	m, err := sim.New(oracle, f.simConfig())
	if err != nil {
		return "", simUsageErr(err)
	}
	return m.Identity(), nil
}

// engineErr is err, of the engine's library, as the command's exit
// status says it: a refused setting (a *fielderr.Error, said in flags) or
// one wrapping one of usage (a name or credential refused, which names
// its flag) is bad input (2), else a failure (1) that flag, when given,
// begins.
func engineErr(flag string, err error, usage ...error) error {
	if fielderr.As(err) != nil {
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
// Drawer of route ("" for a batch), whose warnings go to stderr.
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
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	d, err := f.coord.Draw(ctx, route)
	if err != nil {
		return engineErr("--nats", err)
	}
	f.drawer, f.minVoters, f.followVoters = d, f.coord.MinVoters(), f.coord.FollowVoters()
	if route == "" {
		return nil
	}
	if served, err := d.Served(ctx, route); err == nil && !served {
		fmt.Fprintf(stderr, "maker: note: no worker has served %q on %s yet: samples fail after %s without one (start maker worker --nats %s with the same model flags)\n", route, f.natsURL, cluster.DefaultNoWorker, f.natsURL)
	}
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

// natsJournal opens --journal nats:RUN (cluster.Coordinator.Journal). A
// resume waits out the lease of a coordinator that died.
func (f *runFlags) natsJournal(stderr io.Writer) (*journal.Journal, error) {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout+cluster.DefaultLeaseTTL+2*time.Second)
	defer cancel()
	j, err := f.coord.Journal(ctx, f.jnl.Resume, func(wait time.Duration) {
		fmt.Fprintf(stderr, "maker: note: %s is locked by another coordinator; waiting up to %s for its lease to expire (if it died)\n", f.jnl.Path, wait)
	})
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
	n := &natsCmd{}
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
	fs.StringVar(&n.cfg.Addr, "addr", cluster.DefaultAddr, "HOST:PORT to listen on (port 0: a free one, printed)")
	fs.StringVar(&n.cfg.Store, "store", "mdap-nats", "folder JetStream keeps its streams in (jobs, journals, tasks); kept across restarts")
	fs.StringVar(&n.cfg.Creds, "creds", "", "folder of the role credentials (generated when missing; default STORE/creds)")
	fs.StringVar(&n.cfg.Auth, "auth", "roles", "roles (nkeys per role, each role only its subjects) or token ($"+natsTokenEnv+", no roles)")
	fs.BoolVar(&n.cfg.SharedWorker, "shared-worker", false, "also make and accept worker.nk, one key for every worker: RISK: any holder acts as every worker (--min-workers counts them as one), and revoking one worker means revoking all; by default each worker has its own identity (maker nats worker add NAME)")
	fs.BoolVar(&n.cfg.SharedCoordinator, "shared-coordinator", false, "also make and accept coordinator.nk, one coordinator key for every run: RISK: any holder may read and append to every run's journal, take its lease, and read and write every task queue and its results; by default coordinators use the key of their run (maker nats run add RUN)")
	fs.BoolVar(&n.cfg.SyncAlways, "sync-always", false, "fsync every write before acknowledging it (a power loss loses no acknowledged journal line; slower)")
	fs.BoolVar(&n.logs, "log", false, "the server's log on stderr")
	fs.StringVar(&n.cfg.Monitor, "monitor-addr", "", "expose the NATS server's own monitoring endpoints (/varz, /jsz, /healthz) on [HOST]:PORT; a port alone listens on 127.0.0.1; loopback only, as they have no authentication")
	registerEngineFlags(fs, &n.cfg.Provision)
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
	n.cfg.Token = os.Getenv(natsTokenEnv)
	if n.cfg.Auth == cluster.AuthToken && (fs.Changed("ack-wait") || fs.Changed("max-deliver")) {
		return usageErr("--ack-wait and --max-deliver are the engine's settings with --auth roles; with --auth token each worker sets its own (maker worker --ack-wait)")
	}
	err := n.cfg.Validate()
	if fe := fielderr.As(err); fe != nil && fe.Fields[0].Name == "Token" { // no flag: $MDAP_NATS_TOKEN's
		return usageErr("--auth token: set $%s to the token clients must send", natsTokenEnv)
	}
	return fieldUsageErr(err, clusterFlagOf, "nats")
}

// run serves until the command's context ends. Flags first, files after:
// check has refused bad flags before run writes any credentials.
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
	// The watch of the credentials folder lets an identity issued in and
	// cuts one revoked off (maker nats worker add, revoke).
	e, err := cluster.StartEngine(n.cfg, logger, func(closed int, err error) {
		if err != nil {
			fmt.Fprintf(stderr, "maker nats: %v (the keys in force are kept)\n", err)
			return
		}
		fmt.Fprintf(stderr, "maker nats: a key was revoked: closed %d connection(s) signed in with it\n", closed)
	})
	switch {
	case errors.Is(err, cluster.ErrAuth):
		return usageErr("--creds: %w", err)
	case err != nil: // check ran Validate: a field refused now is the store's or the folder's path
		return engineErr("", err, cluster.ErrConfig)
	}
	defer e.Stop()
	n.obs.probe("nats", func(context.Context) error { return e.Ready() })
	if err := n.obs.observer().ObserveEngine(engineFigures(e.Server)); err != nil {
		return failed(fmt.Errorf("--metrics-addr: the engine's metrics: %w", err))
	}
	if u := e.MonitorURL(); u != "" {
		fmt.Fprintf(stderr, "maker nats: the NATS server's monitoring endpoints at %s (/varz, /jsz, /healthz)\n", u)
	}
	fmt.Fprintf(stderr, "maker nats: JetStream serving %s, store %s; stop with Ctrl-C\n", e.ClientURL(), e.StoreDir)
	fmt.Fprintf(stderr, "maker nats: %s\n", e.Creds.Note(e.Made))
	fmt.Fprintln(cmd.OutOrStdout(), e.ClientURL()) // last: a client that read it finds the notes written
	<-cmd.Context().Done()
	fmt.Fprintln(stderr, "maker nats: stopping")
	return nil
}

// registerEngineFlags registers the engine's settings of what it
// provisions: the routes' ack wait and deliveries, the routes it serves,
// and the bounds of one key's jobs.
func registerEngineFlags(fs *pflag.FlagSet, c *cluster.ProvisionConfig) {
	fs.DurationVar(&c.AckWait, "ack-wait", cluster.DefaultAckWait, "how long a job of a dead worker waits before another worker takes it (every route's; workers report progress every third of it)")
	fs.IntVar(&c.MaxDeliver, "max-deliver", cluster.DefaultMaxDeliver, "most deliveries of a job (a job that kept killing its workers is then left to expire); at least 2")
	fs.Int64Var(&c.KeyJobs, "key-jobs", cluster.DefaultKeyJobs, "most jobs one key may have on one route at once, queued or being answered (the coordinators sharing a run key share them); the bound in force is fixed at start to min(key-jobs, the job stream's 256 MiB / 2 / (max-routes x job-bytes)), 32 at the defaults, so that one key's jobs over every route stay within half of the job stream")
	fs.IntVar(&c.MaxRoutes, "max-routes", cluster.DefaultMaxRoutes, "most routes (models) the engine serves at once, 1 to 1024: a route past it is refused; more routes leave one key fewer jobs a route (see --key-jobs)")
	fs.IntVar(&c.RouteQuota, "route-quota", cluster.DefaultRouteQuota, "most routes one worker identity may make the engine serve (route consumers made at its request that are still in use; a route already served costs nothing), at most --max-routes: one worker credential cannot take every route; the count is kept on the server, so a restart does not reset it")
	fs.IntVar(&c.DrawerQuota, "drawer-quota", cluster.DefaultDrawerQuota, "most Drawers (coordinator processes) one coordinator identity (a run key, or the shared coordinator key) may have the engine take replies for at once, at most --max-drawers: one coordinator credential cannot take every Drawer; the count is kept on the server, so a restart does not reset it")
	fs.DurationVar(&c.DrawerEvery, "drawer-every", cluster.DefaultDrawerEvery, "how often one coordinator identity may have the engine make a new Drawer, past a burst of its --drawer-quota (1ms to 1h): each new Drawer and each close rewrites the reply stream's subjects, so one credential opening and closing Drawers in a loop cannot slow other runs; a coordinator asking faster waits its turn (up to 30s), a Drawer already served costs nothing")
	fs.IntVar(&c.MaxDrawers, "max-drawers", cluster.DefaultMaxDrawers, "most Drawers (coordinator processes) the engine takes replies for at once, 1 to 4096: one more is refused, naming it; more Drawers leave one worker fewer replies a Drawer (see --reply-keep)")
	fs.Int64Var(&c.ReplyKeep, "reply-keep", cluster.DefaultReplyKeep, "most replies one worker identity may have stored for one Drawer, not yet taken; the bound in force is fixed at start to min(reply-keep, the reply stream's 256 MiB / 2 / (max-drawers x reply-bytes)), 4 at the defaults, so that one worker's replies over every Drawer stay within half of the reply stream")
	fs.Int32Var(&c.ReplyBytes, "reply-bytes", cluster.DefaultReplyBytes, "largest reply in bytes, at most 1048576 (NATS's largest message); a larger reply fails its samples at once, naming its size")
	fs.Int64Var(&c.RunKeyBytes, "run-key-bytes", cluster.DefaultRunKeyBytes, "the journal budget of each run key (its run's and its batch's task journals, on a stream of its own that no other key shares; JetStream reserves it on disk): a run key that fills it fails its own run, never another's; one run's own: maker nats run add RUN --bytes N")
	fs.Int32Var(&c.JobBytes, "job-bytes", cluster.DefaultJobBytes, "largest job in bytes (a sample's prompt, tools and settings), at most 1048576, NATS's largest message; a larger job's samples fail naming it")
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
// (for the simulated model, the task's seed is part of it). The Drawer
// warns on stderr of a worker it quarantines.
func (f *runFlags) natsBatchModel(stderr io.Writer) (func(batch.Job, sim.Oracle, uint64) (llms.Model, error), error) {
	if err := f.draw("", stderr); err != nil {
		return nil, err
	}
	base := *f
	return func(job batch.Job, oracle sim.Oracle, seed uint64) (llms.Model, error) {
		if base.oneModel() == "sim" && job.Kind() != "hanoi" {
			return nil, errors.New("over --nats the workers' simulated model answers Towers of Hanoi only (a spec's script does not travel): run spec tasks over --nats with a real --model")
		}
		g := base
		g.sim.Seed = seed
		route, err := g.route(oracle)
		if err != nil {
			return nil, err
		}
		return base.drawer.SpecModel(route, g.oneModel(), g.cfg.Price.InputPerMillion, g.cfg.Price.OutputPerMillion)
	}, nil
}

// pricedNATSModel gives m the price the --model spec names
// (cluster.SpecPrice), so that --max-cost counts what the workers' calls
// cost.
func (f *runFlags) pricedNATSModel(m *cluster.Model, err error) (llms.Model, error) {
	if err != nil {
		return nil, err
	}
	if p, ok := cluster.SpecPrice(f.oneModel(), f.cfg.Price.InputPerMillion, f.cfg.Price.OutputPerMillion); ok {
		return cluster.Priced(m, p), nil
	}
	return m, nil
}

// batchQueue is the task queue of maker solve --nats: queue (--queue),
// or one named after the tasks file and the settings, so every
// coordinator started on the same file and flags shares it. It opens the
// queue once, so that a credential refused it (a run key of another
// queue) is a usage error before anything is written.
func (f *runFlags) batchQueue(ctx context.Context, tasksFile, queue string) (string, error) {
	if queue == "" {
		content, err := os.ReadFile(tasksFile)
		if err != nil {
			return "", usageErr("%w", err)
		}
		route, err := f.route(hanoi.Oracle{}) // the identity is the oracle's business only for answers
		if err != nil {
			return "", err
		}
		queue = cluster.BatchQueueName(content, route, f.cfg.Vote.K, f.cfg.MaxTokens, f.sim.Seed)
	}
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	_, err := f.coord.OpenTaskQueue(ctx, queue)
	switch {
	case errors.Is(err, cluster.ErrAuth):
		return "", usageErr("--nats: %w; with a run key give --queue NAME, the run it was issued for", err)
	case err != nil:
		return "", failed(fmt.Errorf("--nats: %w", err))
	}
	return queue, nil
}

// solveOverNATS is maker solve with --nats: cluster.Coordinator.SolveBatch
// on queue (batchQueue).
func (f *runFlags) solveOverNATS(ctx context.Context, queue string, jobs []batch.Job, base batch.Runner, store *batch.Store, concurrency int, stderr io.Writer) (batch.Summary, error) {
	sum, err := f.coord.SolveBatch(ctx, cluster.BatchConfig{Queue: queue, Jobs: jobs, Runner: base, Store: store, Concurrency: concurrency,
		Notef: func(format string, args ...any) { fmt.Fprintf(stderr, "maker solve: "+format+"\n", args...) }})
	if err != nil && ctx.Err() == nil {
		return sum, failed(fmt.Errorf("--nats: %w", err))
	}
	return sum, err
}

// engineFigures reads the embedded engine's state for its metrics
// (maker nats --metrics-addr).
func engineFigures(srv *cluster.Server) func(context.Context) (observe.EngineFigures, bool) {
	return func(context.Context) (observe.EngineFigures, bool) {
		st, err := srv.Stats()
		if err != nil {
			return observe.EngineFigures{}, false
		}
		f := observe.EngineFigures{Streams: map[string]observe.StreamFigures{}, Connections: int64(st.Connections),
			Workers: int64(st.Workers), Served: st.Served, Refused: st.Refused}
		for name, s := range st.Streams {
			f.Streams[name] = observe.StreamFigures{Messages: int64(s.Messages), Bytes: int64(s.Bytes), Consumers: int64(s.Consumers),
				Undelivered: int64(s.Pending), AckPending: int64(s.AckPending), Waiting: int64(s.Waiting)}
		}
		return f, true
	}
}
