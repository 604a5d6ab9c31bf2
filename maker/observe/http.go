package observe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/httpbound"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ErrAddr: a --metrics-addr that cannot be listened on as given.
var ErrAddr = errors.New("invalid metrics address")

// ErrListen: the metrics endpoint could not listen on its address (the
// port is taken, say); the listener's error is wrapped too.
var ErrListen = errors.New("metrics endpoint")

// Probe is one readiness check of /readyz: Check returns nil when the
// named dependency is ready (the model reachable, the engine connected,
// the journal open).
type Probe struct {
	Name  string
	Check func(context.Context) error
}

// probeTimeout bounds each readiness check.
const probeTimeout = 2 * time.Second

// Handler serves /metrics (reg in the Prometheus text format; an empty
// page when reg is nil), /healthz (200 "ok" while the process serves) and
// /readyz (200 "ready" when every probe passes, else 503 naming each
// failed probe and its error). Only GET and HEAD are served.
func Handler(reg *prometheus.Registry, probes ...Probe) http.Handler {
	mux := http.NewServeMux()
	var metrics http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	if reg != nil {
		metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{MaxRequestsInFlight: 4, Timeout: 10 * time.Second})
	}
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		var failed []string
		for _, p := range probes {
			ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
			err := p.Check(ctx)
			cancel()
			if err != nil {
				failed = append(failed, p.Name+": "+err.Error())
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if len(failed) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready:\n"+strings.Join(failed, "\n"))
			return
		}
		fmt.Fprintln(w, "ready")
	})
	return mux
}

// ListenAddr is the address --metrics-addr ADDR listens on: a port alone
// ("9464" or ":9464") means the loopback interface, 127.0.0.1:9464, so
// that nothing is exposed unless a host is named (0.0.0.0:9464 for every
// interface).
//
// Errors: ErrAddr for an address that is not [HOST]:PORT.
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return "", fmt.Errorf("%w: empty; give [HOST]:PORT, such as 127.0.0.1:9464", ErrAddr)
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w; give [HOST]:PORT, such as 127.0.0.1:9464", ErrAddr, addr, err)
	}
	if port == "" {
		return "", fmt.Errorf("%w: %q has no port; give [HOST]:PORT, such as 127.0.0.1:9464", ErrAddr, addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server is a running metrics endpoint.
type Server struct {
	*httpbound.Running
}

// Bounds are the metrics endpoint's limits: a scraper, a probe or two
// and a person with curl need a handful of connections, so a flood of
// clients (authenticated or not) costs at most MaxConns descriptors and
// goroutines and MaxInFlight handlers at once (each /readyz runs every
// probe), each refused past its cap with a 503 rather than queued.
var Bounds = httpbound.Limits{
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       10 * time.Second,
	WriteTimeout:      30 * time.Second,
	IdleTimeout:       time.Minute,
	MaxConns:          32,
	MaxInFlight:       8,
	MaxHeaderBytes:    httpbound.DefaultMaxHeaderBytes, // a bearer token is well under it
}

// Serve listens on addr (see ListenAddr) and serves h in a goroutine it
// owns until Close, within Bounds: read, write and idle timeouts, 16 KiB
// of request headers, at most Bounds.MaxConns connections open and
// Bounds.MaxInFlight requests handled at once.
//
// Errors: ErrAddr; ErrListen with the listener's error (the port is
// taken, say).
func Serve(addr string, h http.Handler) (*Server, error) {
	addr, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrListen, err)
	}
	return &Server{Bounds.Serve(context.Background(), ln, h)}, nil
}
