package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/cobra"
	"github.com/tmc/langchaingo/llms"
)

// workerModelFlags are the run flags a worker takes: its model.
var workerModelFlags = append([]string{"model", "models", "base-url", "timeout"}, simFlags...)

func newWorker() *cobra.Command {
	var (
		flags     runFlags
		natsURL   string
		natsCreds string
		inflight  int
		ackWait   time.Duration
		grace     time.Duration
		name      string
		logLevel  string
		obs       watchFlags
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Draw samples for coordinators on other machines: a stateless NATS worker",
		Long: `worker takes sample jobs from a NATS JetStream queue, calls its model with each
job's messages, options and sample identity, publishes the reply and then
acknowledges the job. Run any number of workers, on any machines; they join
and leave at will. A job whose worker dies is redelivered to another after
--ack-wait; a live worker reports progress every third of it, however long its
model takes.

Workers and coordinators meet on the model: a coordinator run with --nats and
--model M draws from the workers started with the same --model M (for the
simulated model, the same --seed, --p, --flag-rate, --error-rate,
--wrong-answers and --concentration: any worker may draw any sample, and the
answer is the same on every machine). Workers of different models serve an
ensemble. The simulated model answers Towers of Hanoi prompts.

SIGINT or SIGTERM stops the worker: it takes no more jobs, lets its model calls
finish within --grace (their replies are sent), hands back the jobs of calls
still running, prints what it did and exits with status 0.`,
		Example: `  maker worker --nats nats://127.0.0.1:4222 --model sim --inflight 4
  maker worker --nats nats://10.0.0.5:4222 --model openai:llama3 --base-url http://127.0.0.1:8000/v1 --inflight 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := flags.validate(cmd); err != nil {
				return err
			}
			switch {
			case natsURL == "":
				return usageErr("--nats URL: the NATS server to take jobs from (start one with: maker nats)")
			case inflight < 1 || inflight > 4096:
				return usageErr("--inflight %d: use 1 to 4096", inflight)
			case ackWait < time.Second:
				return usageErr("--ack-wait %s: use at least 1s", ackWait)
			case grace < 0:
				return usageErr("--grace %s: must be 0 or positive", grace)
			}
			level, err := parseLogLevel(logLevel)
			if err != nil {
				return err
			}
			if err := checkNATSURL(natsURL); err != nil {
				return err
			}
			if err := flags.loadModelsFile(cmd.Flags()); err != nil {
				return err
			}
			oracle := hanoi.Oracle{}
			route, err := flags.route(oracle)
			if err != nil {
				return err
			}
			if len(flags.models) > 1 {
				return usageErr("--model given %d times: a worker serves one model", len(flags.models))
			}
			for _, name := range []string{"structured", "verbose"} {
				if cmd.Flags().Changed(name) {
					return usageErr("--%s does not apply to maker worker", name)
				}
			}
			model, err := models.Open(flags.oneModel(), models.Options{BaseURL: flags.baseURL, Timeout: flags.timeout, Sim: func() (llms.Model, error) {
				return sim.New(oracle, flags.simConfig())
			}})
			if err != nil {
				return usageErr("--model: %w", err)
			}
			allowDrain(cmpGrace(cmd, grace)) // calls in progress may finish before the watchdog exits
			if err := obs.start(cmd.Context(), "maker-worker", cmd.ErrOrStderr()); err != nil {
				return err
			}
			defer obs.stop(cmd.Context())
			model = observe.Model(obs.observer(), model, maker.ModelIdentity(model))
			n := &natsRun{natsURL: natsURL, natsCreds: natsCreds}
			obs.probe("engine", n.engineProbe)
			if err := n.connectNATS(cluster.RoleWorker, "maker worker"); err != nil {
				return err
			}
			defer n.closeNATS()
			ctx, cancel := context.WithTimeout(cmd.Context(), setupTimeout)
			w, err := cluster.NewWorker(ctx, n.js, model, cluster.WorkerConfig{
				Route: route, Name: name, Inflight: inflight, AckWait: ackWait, Grace: cmpGrace(cmd, grace),
				Logger: obs.logger(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}),
			})
			cancel()
			if err != nil {
				return failed(fmt.Errorf("--nats: %w", err))
			}
			if err := obs.observer().ObserveWorker(func() (int64, int64) { st := w.Stats(); return st.Served, st.Failed }); err != nil {
				return failed(err)
			}
			stderr := cmd.ErrOrStderr()
			fmt.Fprintf(stderr, "maker worker: serving %q from %s, %s at a time, jobs of a dead worker back after %s; stop with Ctrl-C\n", route, natsURL, words.Plural(inflight, "call"), w.AckWait())
			err = w.Run(cmd.Context())
			st := w.Stats()
			fmt.Fprintf(stderr, "maker worker: stopped: served %d (%d failed), withdrawn %d, handed back %d, redelivered to it %d\n",
				st.Served, st.Failed, st.Withdrawn, st.Released, st.Redelivered)
			if err != nil {
				return failed(err)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&natsURL, "nats", "", "NATS URL to take jobs from, e.g. nats://127.0.0.1:4222")
	registerNATSCreds(fs, &natsCreds)
	fs.IntVar(&inflight, "inflight", 1, "most model calls in progress at once")
	fs.DurationVar(&ackWait, "ack-wait", cluster.DefaultAckWait, "how long a job of a dead worker waits before another worker takes it (shared by the workers of a model: the last started sets it); on maker nats, or a server provisioned by maker nats provision, the engine's --ack-wait applies instead")
	fs.DurationVar(&grace, "grace", cluster.DefaultGrace, "on SIGINT/SIGTERM, how long model calls in progress may finish")
	fs.StringVar(&name, "name", "", "the worker's name in replies (default host/pid)")
	fs.StringVar(&logLevel, "log-level", "info", "log level on stderr: debug (each job's start and end too), info (each redelivered job it takes: a worker died, stalled or handed it back), warn (replies not published, bad jobs) or error")
	obs.register(fs, false)
	// The model flags, shared with the run commands (same defaults and
	// checks); the vote and journal flags are the coordinator's.
	all := &cobra.Command{}
	flags.register(all)
	for _, f := range workerModelFlags {
		fs.AddFlag(all.Flags().Lookup(f))
	}
	return cmd
}

// cmpGrace passes --grace 0 through as "no grace" (the library's zero is
// its default).
func cmpGrace(cmd *cobra.Command, grace time.Duration) time.Duration {
	if grace == 0 && cmd.Flags().Changed("grace") {
		return time.Nanosecond
	}
	return grace
}
