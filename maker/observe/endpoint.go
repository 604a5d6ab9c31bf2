package observe

import (
	"context"
	"io"
	"log"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"go.opentelemetry.io/otel"
)

// EndpointConfig is what Open sets up for a long-running command: its
// traces (from the environment, as Setup reads it), and, at Addr, its
// metrics with the liveness and readiness probes.
type EndpointConfig struct {
	// Service is the traces' and metrics' service.name (Config.Service).
	Service string
	// Addr is where /metrics, /healthz and /readyz are served (see
	// ListenAddr: a port alone is loopback); "" serves nothing and turns
	// metrics off.
	Addr string
	// Token is the bearer token /metrics and /readyz then require (see
	// Authenticated); Open refuses an Addr other hosts can reach without
	// one.
	Token string
	// Linger keeps the endpoint serving this long on Close, so that a
	// last scrape sees the final totals.
	Linger time.Duration
	// Ready is what /readyz reports; nil means a new Readiness.
	Ready *Readiness
	// Secrets, if set, are redacted from the spans (Config.Secrets) and
	// from the exporters' errors, which OpenTelemetry's global error
	// handler then writes to ErrorLog (the log package's default, stderr,
	// when ErrorLog is nil) instead of the log package's default.
	Secrets  *Secrets
	ErrorLog io.Writer
}

// endpointName is where EndpointConfig's field errors come from.
const endpointName = "observe.EndpointConfig"

// Endpoint is what Open started: the telemetry and the HTTP endpoint.
type Endpoint struct {
	// Telemetry is Setup's, for a Solver's Observer and spans.
	Telemetry *Telemetry
	// Ready is the readiness /readyz reports; add a command's probes.
	Ready  *Readiness
	srv    *Server // nil without an Addr
	linger time.Duration
}

// Open sets up the telemetry of cfg and starts its endpoint. With
// Secrets it installs a global OpenTelemetry error handler that redacts
// them (a collector may echo OTEL_EXPORTER_OTLP_HEADERS' credentials in
// an error).
//
// Errors: a field error wrapping ErrConfig for a negative Linger, or one
// without an Addr, a bad
// Token (CheckToken) or an Addr that other hosts can reach without a
// Token; Setup's errors; Serve's (ErrAddr, ErrListen). Nothing is left running on an error. Call
// Close.
func Open(ctx context.Context, cfg EndpointConfig) (*Endpoint, error) {
	switch {
	case cfg.Linger < 0:
		return nil, fielderr.New(endpointName, "Linger", cfg.Linger, "must be 0 or positive")
	case cfg.Linger > 0 && cfg.Addr == "":
		return nil, fielderr.New(endpointName, "Linger", cfg.Linger, "needs Addr: there is no endpoint to keep serving")
	}
	if cfg.Token != "" {
		if err := CheckToken(cfg.Token); err != nil {
			return nil, fielderr.Of(endpointName, "Token", Redacted, err)
		}
	} else if cfg.Addr != "" {
		if loopback, err := Loopback(cfg.Addr); err == nil && !loopback {
			return nil, fielderr.New(endpointName, "Addr", cfg.Addr, "reachable from other machines: give a Token, or listen on loopback")
		}
	}
	tel, err := Setup(ctx, Config{Service: cfg.Service, Metrics: cfg.Addr != "", Secrets: cfg.Secrets})
	if err != nil {
		return nil, err
	}
	e := &Endpoint{Telemetry: tel, Ready: cfg.Ready, linger: cfg.Linger}
	if e.Ready == nil {
		e.Ready = &Readiness{}
	}
	if cfg.Secrets != nil {
		out := cfg.ErrorLog
		if out == nil {
			out = log.Writer()
		}
		l := log.New(RedactWriter(out, cfg.Secrets), "", log.LstdFlags)
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { l.Print(err) }))
	}
	if cfg.Addr == "" {
		return e, nil
	}
	h := Handler(tel.Registry, Probe{Name: "ready", Check: e.Ready.Check})
	if cfg.Token != "" {
		h, _ = Authenticated(h, cfg.Token) // checked above
	}
	if e.srv, err = Serve(cfg.Addr, h); err != nil {
		_ = tel.Shutdown(ctx)
		return nil, err
	}
	return e, nil
}

// Addr is the address the endpoint listens on (the port chosen, for port
// 0), "" without one.
func (e *Endpoint) Addr() string {
	if e.srv == nil {
		return ""
	}
	return e.srv.Addr()
}

// Close marks the process not ready (/readyz answers 503 from now on),
// lingers (EndpointConfig.Linger, cut short when ctx ends) so a last
// scrape of /metrics sees the totals, stops the endpoint and flushes the
// traces, for up to 5 seconds whether or not ctx has ended.
func (e *Endpoint) Close(ctx context.Context) {
	e.Ready.End()
	if e.srv != nil && e.linger > 0 {
		t := time.NewTimer(e.linger)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	if e.srv != nil {
		_ = e.srv.Close()
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = e.Telemetry.Shutdown(fctx)
}
