package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/credentials"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/spf13/pflag"
)

// watchFlags are the observability flags of every long-running command:
// --metrics-addr (with /healthz and /readyz), --metrics-linger and
// --log-format. Traces are configured by the standard OTEL_* variables
// (see docs/observe.md).
type watchFlags struct {
	addr   string
	linger time.Duration
	format string

	tel *observe.Telemetry
	ep  *observe.Endpoint
	st  *observe.Readiness // /readyz, shared by copies of the flags
	// secrets are credentials from flags (an MCP --token), never logged.
	secrets []string
}

// metricsTokenEnv holds the bearer token that guards --metrics-addr; it is
// required when the address is not a loopback one.
const metricsTokenEnv = "MDAP_METRICS_TOKEN"

func (w *watchFlags) register(fs *pflag.FlagSet, linger bool) {
	fs.StringVar(&w.addr, "metrics-addr", "", "serve /metrics (Prometheus), /healthz and /readyz on [HOST]:PORT; a port alone listens on 127.0.0.1 only; another host (0.0.0.0:PORT exposes it) needs a bearer token in $"+metricsTokenEnv+", which /metrics and /readyz then require. Traces: set OTEL_EXPORTER_OTLP_ENDPOINT")
	if linger {
		fs.DurationVar(&w.linger, "metrics-linger", 0, "with --metrics-addr: keep serving the final metrics this long after the run ends, so a last scrape sees the totals (Ctrl-C ends it early)")
	}
	fs.StringVar(&w.format, "log-format", observe.LogText, "log lines on stderr: text or json (with trace_id and span_id when tracing is on; API keys never printed)")
}

// start checks the flags, sets up traces (from the environment) and
// metrics (with --metrics-addr) and starts the endpoint (observe.Open,
// which checks its config). Bad flags are usage errors, returned before
// anything is written.
func (w *watchFlags) start(ctx context.Context, service string, stderr io.Writer) error {
	if w.format != observe.LogText && w.format != observe.LogJSON {
		return usageErr("--log-format %q: use text or json", w.format)
	}
	var token string
	if w.addr != "" {
		token = os.Getenv(metricsTokenEnv)
		w.redact(ctx, token)
	}
	// The spans, and the exporters' errors, carry what a model server or
	// a collector may have echoed a key into.
	ep, err := observe.Open(ctx, observe.EndpointConfig{Service: service, Addr: w.addr, Token: token, Linger: w.linger, Ready: w.ready(), Secrets: heldSecrets(ctx), ErrorLog: os.Stderr})
	switch fe := fielderr.As(err); {
	case fe != nil && fe.Fields[0].Name == "Token":
		return usageErr("$%s: %w", metricsTokenEnv, fe.Cause)
	case fe != nil && fe.Fields[0].Name == "Addr":
		return usageErr("--metrics-addr %s is reachable from other machines and the metrics endpoint would be open to them: set %s to a bearer token (Prometheus sends it with authorization.credentials_file), or listen on loopback (a port alone means 127.0.0.1)", w.addr, metricsTokenEnv)
	case fe != nil:
		return fieldUsageErr(err, map[string]string{"Linger": "metrics-linger", "Addr": "metrics-addr"}, "observe")
	case errors.Is(err, observe.ErrAddr), errors.Is(err, observe.ErrListen):
		return usageErr("--metrics-addr %s: %w", w.addr, err)
	case err != nil:
		return usageErr("%w (see docs/observe.md)", err)
	}
	w.ep, w.tel = ep, ep.Telemetry
	if w.addr != "" {
		fmt.Fprintf(stderr, "maker: metrics at http://%s/metrics (and /healthz, /readyz)\n", ep.Addr())
	}
	return nil
}

// ready is /readyz's state, shared by copies of the flags.
func (w *watchFlags) ready() *observe.Readiness {
	if w.st == nil {
		w.st = &observe.Readiness{}
	}
	return w.st
}

// observer is the Watcher, nil when nothing is watched.
func (w *watchFlags) observer() *observe.Watcher { return w.tel.Observer() }

// probe adds a readiness check to /readyz.
func (w *watchFlags) probe(name string, check func(context.Context) error) {
	w.ready().Add(observe.Probe{Name: name, Check: check})
}

// stop lingers (--metrics-linger, cut short when ctx ends), then stops the
// endpoint and flushes the traces (for up to 5 seconds).
func (w *watchFlags) stop(ctx context.Context) {
	if w.ep == nil {
		w.ready().End() // from now on the command is not ready
		return
	}
	w.ep.Close(ctx)
}

// redact keeps secret, a credential read from the command line or the
// environment, out of the logs and out of everything the command writes.
// Empty strings are skipped.
func (w *watchFlags) redact(ctx context.Context, secrets ...string) {
	for _, s := range secrets {
		if s != "" {
			w.secrets = append(w.secrets, s)
			addSecret(ctx, s)
		}
	}
}

// logger is a slog logger of the --log-format handler for stderr,
// redacting the credentials the process holds (observe.Logger).
func (w *watchFlags) logger(stderr io.Writer, opts *slog.HandlerOptions) *slog.Logger {
	return observe.Logger(stderr, w.format, opts, append(secrets(), w.secrets...)...)
}

// secrets are the credentials this process may hold, never to be logged.
func secrets() []string {
	// The environment's model keys, and a password in a server URL of
	// the environment (a proxy's basic authentication).
	out := credentials.Of(models.Options{})
	for _, k := range []string{cluster.TokenEnv, tokenEnv, metricsTokenEnv} {
		if v := os.Getenv(k); v != "" {
			out = append(out, v)
		}
	}
	// OTEL_EXPORTER_OTLP_HEADERS carries a collector's credentials.
	return append(out, observe.EnvSecrets(os.Getenv)...)
}

// watchRun wires a run command to the telemetry: the queue, the cost
// cap and the readiness probes (model reachable, engine connected,
// journal open when journaled).
func (f *runFlags) watchRun(w *watchFlags, journaled bool) {
	if d := f.drawer; d != nil { // the --nats jobs published, neither answered nor withdrawn
		_ = w.observer().ObserveQueue(d.Queued)
	}
	if f.MaxCost > 0 {
		w.observer().RecordCostCap(context.Background(), f.MaxCost)
	}
	w.probe("model", observe.DialProbe(f.Client.BaseURL))
	w.probe("engine", f.natsRun.engineProbe)
	if journaled {
		w.probe("journal", func(context.Context) error { return nil }) // open until the run ends (then /readyz says so)
	}
}

// runLogger is a run's logger: with --log-format json, warnings (and
// debug lines of red flags and tool calls with --verbose) on stderr; nil
// otherwise.
func (f *runFlags) runLogger(w *watchFlags, stderr io.Writer) *slog.Logger {
	if w.format != observe.LogJSON {
		return nil
	}
	level := slog.LevelWarn
	if f.Settings.Verbose {
		level = slog.LevelDebug
	}
	return w.logger(stderr, &slog.HandlerOptions{Level: level})
}

// warnLogger is the batch's warning logger (observe.WarnLogger).
func (w *watchFlags) warnLogger(stderr io.Writer) *slog.Logger {
	return observe.WarnLogger(stderr, w.format, append(secrets(), w.secrets...)...)
}

// parseLogLevel reads a --log-level value: debug, info, warn or error.
func parseLogLevel(s string) (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s)); err != nil {
		return 0, usageErr("--log-level %q: use debug, info, warn or error", s)
	}
	return level, nil
}

// solverObserver is the observer for a library config: nil (not a nil
// *Watcher) when nothing is watched.
func (w *watchFlags) solverObserver() maker.Observer { return w.tel.SolverObserver() }
