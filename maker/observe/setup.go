// Package observe watches mdap runs with OpenTelemetry: traces of runs,
// steps, model calls (with the GenAI semantic conventions, gen_ai.*) and
// tool calls, exported over OTLP/HTTP when the standard OTEL_* variables
// name an endpoint; metrics served in the Prometheus text format on
// /metrics beside /healthz and /readyz (on loopback unless a host is
// named, and behind a bearer token with Authenticated); and slog handlers that stamp each
// line with the trace and span ids and never print a secret.
//
// Everything is off unless asked for: without an OTLP endpoint the tracer
// is the no-op one, without a metrics address there is no meter, and a
// Solver whose Observer is nil pays one nil check per step and call (see
// maker.Observer). See docs/observe.md for the setup, the metric names and
// the dashboard.
package observe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ErrConfig: an OTEL_* variable or an option asks for what this package
// cannot do (an unsupported protocol or exporter, say). The message names
// the variable and what to set instead.
var ErrConfig = fielderr.ErrConfig

// Config chooses what to watch.
type Config struct {
	// Service is the default service.name of the traces and metrics
	// (OTEL_SERVICE_NAME overrides it); "maker" if empty.
	Service string
	// Metrics turns on the meter and its Prometheus registry (served by
	// Handler). Off, Telemetry.Registry is nil and no instrument records.
	Metrics bool
	// Getenv reads the environment; nil means os.Getenv. Tests set it.
	Getenv func(string) string
	// SpanExporter, if set, receives the spans instead of an OTLP
	// exporter and turns tracing on regardless of the environment (tests
	// pass tracetest's in-memory exporter). Spans are exported
	// synchronously then, unless Batch.
	SpanExporter sdktrace.SpanExporter
	// Batch exports SpanExporter's spans in batches, as the OTLP exporter
	// is (benchmarks measure that).
	Batch bool
	// MetricReader, if set, is added to the meter (tests pass a
	// sdkmetric.ManualReader); it turns metrics on.
	MetricReader sdkmetric.Reader
	// Secrets, if set, are kept out of the spans: an error status's text
	// (a model server may echo a refused key in its error, which a call's,
	// a step's and the run's error carry to the collector) is redacted as
	// RedactWriter redacts, with the set as it is when the span ends.
	Secrets *Secrets
}

// Telemetry is what Setup made: the tracer and meter providers, the
// Prometheus registry, and the Observer a Solver takes.
type Telemetry struct {
	// Tracing reports that spans are recorded and exported.
	Tracing bool
	// Registry holds the metrics for /metrics; nil with metrics off.
	Registry *prometheus.Registry
	tp       trace.TracerProvider
	sdkTP    *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	watcher  *Watcher
}

// TracingEnabled reports whether the environment asks for traces: an
// OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, OTEL_SDK_DISABLED is not
// true and OTEL_TRACES_EXPORTER is not none.
func TracingEnabled(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup builds the telemetry cfg and the environment ask for. With
// tracing on it installs its tracer provider and the W3C trace-context
// propagator as OpenTelemetry's globals (so maker/cluster and the MCP
// server carry the trace across), reading the standard variables:
// OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG. Only the
// http/protobuf protocol and the otlp exporter are built in.
//
// Errors: ErrConfig for an unsupported protocol or exporter, or a bad
// variable; the exporter's errors. Nothing is connected yet: an
// unreachable collector shows as dropped spans, never as a failed run.
// Call Shutdown to flush.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	service := cfg.Service
	if service == "" {
		service = "maker"
	}
	t := &Telemetry{tp: noop.NewTracerProvider()}
	tracing := cfg.SpanExporter != nil || TracingEnabled(getenv)
	metrics := cfg.Metrics || cfg.MetricReader != nil
	if !tracing && !metrics {
		return t, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(service)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("%w: OTEL_RESOURCE_ATTRIBUTES: %w", ErrConfig, err)
	}
	if tracing {
		var exp sdktrace.SpanExporter
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		if cfg.SpanExporter != nil {
			exp = cfg.SpanExporter
			if cfg.Batch {
				opts = append(opts, sdktrace.WithBatcher(exp))
			} else {
				opts = append(opts, sdktrace.WithSyncer(exp))
			}
		} else {
			if err := checkTraceEnv(getenv); err != nil {
				return nil, err
			}
			if exp, err = otlptracehttp.New(ctx); err != nil {
				return nil, fmt.Errorf("%w: the OTLP trace exporter: %w", ErrConfig, err)
			}
			opts = append(opts, sdktrace.WithBatcher(exp))
		}
		// The sampler comes from OTEL_TRACES_SAMPLER(_ARG), default
		// parentbased_always_on.
		t.sdkTP = sdktrace.NewTracerProvider(opts...)
		t.tp = t.sdkTP
		t.Tracing = true
		otel.SetTracerProvider(t.sdkTP)
		otel.SetTextMapPropagator(Propagator)
	}
	var meter metric.Meter
	if metrics {
		t.Registry = prometheus.NewRegistry()
		exp, err := otelprom.New(otelprom.WithRegisterer(t.Registry), otelprom.WithoutScopeInfo())
		if err != nil {
			return nil, fmt.Errorf("%w: the Prometheus exporter: %w", ErrConfig, err)
		}
		mopts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(exp)}
		if cfg.MetricReader != nil {
			mopts = append(mopts, sdkmetric.WithReader(cfg.MetricReader))
		}
		t.mp = sdkmetric.NewMeterProvider(mopts...)
		meter = t.mp.Meter(scope)
	}
	t.watcher, err = newWatcher(t.tp.Tracer(scope), t.Tracing, meter, cfg.Secrets)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// EnvSecrets are the credentials the environment gives the OpenTelemetry
// exporters, to keep out of every output: the values of
// OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS
// (comma-separated KEY=VALUE pairs, a collector's authorization among
// them). A nil getenv means os.Getenv.
func EnvSecrets(getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	var out []string
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, kv := range strings.Split(getenv(k), ",") {
			if _, v, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(v) != "" {
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	return out
}

// scope is the instrumentation scope of every span and instrument.
const scope = "github.com/mdap-go/mdap/maker/observe"

// Propagator is the W3C trace-context and baggage propagator Setup
// installs.
var Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// checkTraceEnv refuses the variables that ask for what is not built in.
func checkTraceEnv(getenv func(string) string) error {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(v); p != "" {
			if p != "http/protobuf" {
				return fmt.Errorf("%w: %s=%q: only http/protobuf is built in (OTLP over HTTP, port 4318)", ErrConfig, v, p)
			}
			break
		}
	}
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%q: use otlp, or none to turn tracing off", ErrConfig, e)
	}
	return nil
}

// Observer is the maker.Observer of this telemetry, nil when neither
// traces nor metrics are on (so an unwatched Solver pays nothing).
func (t *Telemetry) Observer() *Watcher {
	if t == nil || t.watcher == nil {
		return nil
	}
	return t.watcher
}

// TracerProvider is the provider spans are made with: the no-op one when
// tracing is off.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tp }

// Span starts a span named name under ctx (SpanBatch: a batch's, the
// parent of its tasks' runs) and returns its context and what ends it;
// without tracing (or on a nil Telemetry) it returns ctx and a no-op, at
// no cost.
func (t *Telemetry) Span(ctx context.Context, name string) (context.Context, func()) {
	if t == nil || !t.Tracing {
		return ctx, func() {}
	}
	ctx, sp := t.tp.Tracer(scope).Start(ctx, name)
	return ctx, func() { sp.End() }
}

// Shutdown flushes and stops the exporters; ctx bounds the flush. Safe on
// a nil or empty Telemetry.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.sdkTP != nil {
		errs = append(errs, t.sdkTP.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}
