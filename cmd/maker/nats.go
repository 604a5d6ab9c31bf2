package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// natsTokenEnv names the environment variable holding the token a NATS
// server requires (maker nats) and its clients send (--nats).
const natsTokenEnv = "MDAP_NATS_TOKEN"

// natsJournalPrefix marks a --journal on the engine: nats:RUN.
const natsJournalPrefix = "nats:"

// setupTimeout bounds connecting and creating streams at start.
const setupTimeout = 30 * time.Second

// natsRun is the --nats part of runFlags: where samples are drawn and
// journals kept when the run goes through the engine.
type natsRun struct {
	natsURL string
	nc      *nats.Conn
	js      jetstream.JetStream
	drawer  *cluster.Drawer
}

func (n *natsRun) registerNATS(fs *pflag.FlagSet) {
	fs.StringVar(&n.natsURL, "nats", "", "NATS URL (e.g. nats://127.0.0.1:4222): draw the samples through maker workers instead of calling the model; $"+natsTokenEnv+" is sent as the token")
}

// validateNATS checks --nats and what it changes: --journal nats:RUN
// needs it; the model's server and the simulated model's latency are the
// workers' business.
func (f *runFlags) validateNATS(cmd *cobra.Command) error {
	fs := cmd.Flags()
	run, onEngine := strings.CutPrefix(f.journal, natsJournalPrefix)
	if f.natsURL == "" {
		if onEngine {
			return usageErr("--journal %s is kept on the NATS engine: give --nats URL too", f.journal)
		}
		return nil
	}
	if err := checkNATSURL(f.natsURL); err != nil {
		return err
	}
	if onEngine && !validRunName(run) {
		return usageErr("--journal %s: the run name after nats: must be 1 to 64 letters, digits, '-' or '_'", f.journal)
	}
	for _, name := range []string{"base-url", "latency", "latency-sigma"} {
		if fs.Changed(name) {
			return usageErr("--%s applies to the workers' model with --nats: give it to maker worker", name)
		}
	}
	return nil
}

func validRunName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// checkNATSURL refuses a --nats that no client could dial.
func checkNATSURL(raw string) error {
	for _, one := range strings.Split(raw, ",") {
		u, err := url.Parse(strings.TrimSpace(one))
		if err != nil || u.Host == "" || (u.Scheme != "nats" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss") {
			return usageErr("--nats %q: want nats://HOST:PORT (several separated by commas), as printed by maker nats", raw)
		}
	}
	return nil
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
		return "", usageErr("simulated model: %w", err)
	}
	return m.Identity(), nil
}

// connectNATS dials --nats once per command.
func (n *natsRun) connectNATS(name string) error {
	if n.nc != nil {
		return nil
	}
	var opts []nats.Option
	if tok := os.Getenv(natsTokenEnv); tok != "" {
		opts = append(opts, nats.Token(tok))
	}
	nc, err := cluster.Connect(n.natsURL, name, opts...)
	if err != nil {
		return failed(fmt.Errorf("--nats: %w (start one with: maker nats)", err))
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return failed(fmt.Errorf("--nats: %w", err))
	}
	n.nc, n.js = nc, js
	return nil
}

// natsModel is the model of a coordinator: samples drawn by the workers
// of the flags' route, within --timeout each, queueing included.
func (f *runFlags) natsModel(oracle sim.Oracle, stderr io.Writer) (llms.Model, error) {
	route, err := f.route(oracle)
	if err != nil {
		return nil, err
	}
	if err := f.connectNATS("maker coordinator"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	f.drawer, err = cluster.NewDrawer(ctx, f.js, cluster.DrawerConfig{Timeout: f.timeout})
	if err != nil {
		return nil, failed(fmt.Errorf("--nats: %w", err))
	}
	if served, err := f.drawer.Served(ctx, route); err == nil && !served {
		fmt.Fprintf(stderr, "maker: note: no worker has served %q on %s yet: the samples wait for one (start maker worker --nats %s with the same model flags)\n", route, f.natsURL, f.natsURL)
	}
	return f.drawer.Model(route)
}

// natsJournal opens --journal nats:RUN. A resume waits out the lease of a
// coordinator that died (at most cluster.DefaultLeaseTTL and a little).
func (f *runFlags) natsJournal(stderr io.Writer) (*maker.Journal, error) {
	run := strings.TrimPrefix(f.journal, natsJournalPrefix)
	if err := f.connectNATS("maker coordinator"); err != nil {
		return nil, err
	}
	wait := cluster.DefaultLeaseTTL + 2*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout+wait)
	defer cancel()
	open := cluster.CreateJournal
	if f.resume {
		open = cluster.OpenJournal
	}
	j, err := open(ctx, f.js, run, cluster.JournalConfig{})
	if errors.Is(err, maker.ErrJournalLocked) && f.resume {
		fmt.Fprintf(stderr, "maker: note: %s is locked by another coordinator; waiting up to %s for its lease to expire (if it died)\n", f.journal, wait)
		j, err = open(ctx, f.js, run, cluster.JournalConfig{WaitLock: wait})
	}
	if errors.Is(err, cluster.ErrEngine) {
		return nil, failed(fmt.Errorf("--journal: %w", err))
	}
	if err != nil {
		return nil, usageErr("--journal: %w", err)
	}
	return j, nil
}

// closeNATS closes what --nats opened: the drawer, then the connection,
// after the journal (closed by the caller before).
func (n *natsRun) closeNATS() {
	if n.drawer != nil {
		_ = n.drawer.Close()
	}
	if n.nc != nil {
		_ = n.nc.Flush()
		n.nc.Close()
	}
}

func newNATS() *cobra.Command {
	var (
		addr, store string
		syncAlways  bool
		logs        bool
		monitorAddr string
		obs         watchFlags
	)
	cmd := &cobra.Command{
		Use:   "nats",
		Short: "Run an embedded NATS server with JetStream for workers and coordinators",
		Long: `nats runs a NATS server with JetStream in this process, so that nothing else
needs installing: workers (maker worker --nats URL) take sample jobs from it,
coordinators (maker hanoi --nats URL) send them, and journals (--journal
nats:RUN) and task queues live on it. It prints the client URL on stdout and
runs until SIGINT or SIGTERM, then stops cleanly (exit status 0).

It listens on loopback by default. To serve other machines, listen on an
address they reach (--addr 0.0.0.0:4222) and set $` + natsTokenEnv + ` on every
machine: the server then requires that token, and clients send it. A real NATS
cluster (nats-server -js) serves the same clients unchanged.`,
		Example: `  maker nats --store ./mdap-nats
  ` + natsTokenEnv + `=secret maker nats --addr 0.0.0.0:4222 --store /var/lib/mdap-nats`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return usageErr("--addr %q: want HOST:PORT such as %s", addr, cluster.DefaultAddr)
			}
			if store == "" {
				return usageErr("--store \"\": give the folder JetStream keeps its streams in")
			}
			abs, err := filepath.Abs(store)
			if err != nil {
				return usageErr("--store %q: %v", store, err)
			}
			token := os.Getenv(natsTokenEnv)
			stderr := cmd.ErrOrStderr()
			cfg := cluster.ServerConfig{Addr: addr, StoreDir: abs, Token: token, SyncAlways: syncAlways, Monitor: monitorAddr}
			if err := obs.start(cmd.Context(), "maker-nats", cmd.ErrOrStderr()); err != nil {
				return err
			}
			defer obs.stop(cmd.Context())
			if logs {
				cfg.Logger = obs.logger(stderr, nil)
			}
			srv, err := cluster.StartServer(cfg)
			if errors.Is(err, cluster.ErrConfig) {
				return usageErr("%w", err)
			}
			if err != nil {
				return failed(err)
			}
			defer srv.Shutdown()
			obs.probe("nats", func(context.Context) error { return srv.Ready() })
			fmt.Fprintln(cmd.OutOrStdout(), srv.ClientURL())
			if u := srv.MonitorURL(); u != "" {
				fmt.Fprintf(stderr, "maker nats: the NATS server's monitoring endpoints at %s (/varz, /jsz, /healthz)\n", u)
			}
			fmt.Fprintf(stderr, "maker nats: JetStream serving %s, store %s; stop with Ctrl-C\n", srv.ClientURL(), abs)
			if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && token == "" {
				fmt.Fprintf(stderr, "maker nats: warning: listening on %s without a token: anyone who reaches it can use it; set $%s\n", host, natsTokenEnv)
			}
			<-cmd.Context().Done()
			fmt.Fprintln(stderr, "maker nats: stopping")
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "addr", cluster.DefaultAddr, "HOST:PORT to listen on (port 0: a free one, printed)")
	fs.StringVar(&store, "store", "mdap-nats", "folder JetStream keeps its streams in (jobs, journals, tasks); kept across restarts")
	fs.BoolVar(&syncAlways, "sync-always", false, "fsync every write before acknowledging it (a power loss loses no acknowledged journal line; slower)")
	fs.BoolVar(&logs, "log", false, "the server's log on stderr")
	fs.StringVar(&monitorAddr, "monitor-addr", "", "expose the NATS server's own monitoring endpoints (/varz, /jsz, /healthz) on [HOST]:PORT; a port alone listens on 127.0.0.1")
	obs.register(fs, false)
	return cmd
}

// natsBatchModel is maker solve's model function with --nats: one Drawer
// for every task, each task's samples drawn by the workers of its route
// (for the simulated model, the task's seed is part of it).
func (f *runFlags) natsBatchModel() (func(batch.Job, sim.Oracle, uint64) (llms.Model, error), error) {
	if err := f.connectNATS("maker coordinator"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	d, err := cluster.NewDrawer(ctx, f.js, cluster.DrawerConfig{Timeout: f.timeout})
	if err != nil {
		return nil, failed(fmt.Errorf("--nats: %w", err))
	}
	f.drawer = d
	base := *f
	return func(job batch.Job, oracle sim.Oracle, seed uint64) (llms.Model, error) {
		if base.oneModel() == "sim" && job.Kind() != "hanoi" {
			return nil, errors.New("over --nats the workers' simulated model answers Towers of Hanoi only (a spec's script does not travel): run spec tasks over --nats with a real --model")
		}
		g := base
		g.seed = seed
		route, err := g.route(oracle)
		if err != nil {
			return nil, err
		}
		return d.Model(route)
	}, nil
}

// solveOverNATS is maker solve with --nats: cluster.SolveBatch on a queue
// named after the tasks file and the settings, so every coordinator
// started on the same file and flags shares it.
func (f *runFlags) solveOverNATS(ctx context.Context, tasksFile string, jobs []batch.Job, base batch.Runner, store *batch.Store, concurrency int, stderr io.Writer) (batch.Summary, error) {
	content, err := os.ReadFile(tasksFile)
	if err != nil {
		return batch.Summary{}, usageErr("%w", err)
	}
	route, err := f.route(hanoi.Oracle{}) // the identity is the oracle's business only for answers
	if err != nil {
		return batch.Summary{}, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00k=%d max_tokens=%d seed=%d\x00", content, route, f.k, f.maxTokens, f.seed)
	sum, err := cluster.SolveBatch(ctx, f.js, cluster.BatchConfig{
		Queue: "solve-" + hex.EncodeToString(h.Sum(nil)[:6]), Jobs: jobs, Runner: base, Store: store, Concurrency: concurrency,
		Notef: func(format string, args ...any) { fmt.Fprintf(stderr, "maker solve: "+format+"\n", args...) },
	})
	if err != nil && ctx.Err() == nil {
		return sum, failed(fmt.Errorf("--nats: %w", err))
	}
	return sum, err
}
