package observe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
)

// ErrEnded: [Readiness.Check] after [Readiness.End]: the process is
// stopping, so it is no longer ready.
var ErrEnded = errors.New("the run has ended")

// Readiness is the /readyz state of a long-running process whose
// dependencies are known only as it starts them: probes are added while
// the endpoint serves, and the process ends. Pass its Check to [Handler]
// as one [Probe]. The zero value is ready, with no probes; it is safe for
// concurrent use.
type Readiness struct {
	mu     sync.Mutex
	probes []Probe
	ended  bool
}

// Add adds a probe: every Check from then on runs it.
func (r *Readiness) Add(p Probe) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.probes = append(r.probes, p)
}

// End marks the process as ending: every Check from then on fails with
// [ErrEnded], and runs no probe.
func (r *Readiness) End() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
}

// Check runs every probe in the order added, outside the lock, and
// returns nil when all pass, else the failures joined (errors.Join), each
// as "NAME: ERROR". Cost: the probes' own.
func (r *Readiness) Check(ctx context.Context) error {
	r.mu.Lock()
	probes, ended := r.probes, r.ended
	r.mu.Unlock()
	if ended {
		return ErrEnded
	}
	var errs []error
	for _, p := range probes {
		if err := p.Check(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// DialProbe returns a readiness check that the model server at baseURL
// accepts connections: it opens a TCP connection to the URL's host (port
// 80 for http and 443 for https when the URL names none) and closes it,
// sending nothing. An empty baseURL (the simulated model, or a provider's
// default server) is always ready. A URL without a host fails every
// check. Cost: one TCP connection a check, bounded by ctx.
func DialProbe(baseURL string) func(context.Context) error {
	return func(ctx context.Context) error {
		if baseURL == "" {
			return nil
		}
		u, err := url.Parse(baseURL)
		if err != nil || u.Host == "" {
			return fmt.Errorf("%q has no host", baseURL)
		}
		host := dialHost(u)
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", host)
		if err != nil {
			return fmt.Errorf("model server %s not reachable: %w", host, err)
		}
		return c.Close()
	}
}

// dialHost is the HOST:PORT that DialProbe connects to for u.
func dialHost(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
