package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// pullers records, on the engine's agent, when each worker identity last
// pulled each route's jobs.
type pullers struct {
	mu   sync.Mutex
	last map[string]map[string]time.Time // route token -> identity key -> last pull
}

// pullerIdle: an identity that has not pulled for this long no longer
// counts as serving the route (a worker's pull waits at most a second
// before it pulls again).
const pullerIdle = 30 * time.Second

func (p *pullers) saw(token, key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]map[string]time.Time{}
	}
	m := p.last[token]
	if m == nil {
		m = map[string]time.Time{}
		p.last[token] = m
	}
	m[key] = time.Now()
}

// serving counts the identities that pulled token's jobs within
// pullerIdle, forgetting the others.
func (p *pullers) serving(token string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for key, at := range p.last[token] {
		if time.Since(at) > pullerIdle {
			delete(p.last[token], key)
			continue
		}
		n++
	}
	return n
}

// serveWorkers answers a coordinator's mdap.engine.workers request.
func (a *Agent) serveWorkers(m *nats.Msg) {
	var req agentRequest
	var resp agentResponse
	if err := json.Unmarshal(m.Data, &req); err != nil || req.Route == "" || len(req.Route) > 4096 {
		resp.Error = "want a route of 1 to 4096 bytes"
	} else {
		resp.Workers = a.pulls.serving(RouteToken(req.Route))
	}
	data, _ := json.Marshal(resp)
	_ = m.Respond(data)
}

// ServingWorkers asks the engine's agent, on nc (a coordinator's
// connection), how many distinct worker identities serve route: those
// whose pulls of the route's jobs the agent saw within the last 30
// seconds. Each identity is a credential, so machines sharing one count
// once. It is what maker --min-workers 0 (the default) settles on.
// Errors wrap ErrEngine, except the one of a server that runs no agent
// (one without roles), which cannot count identities.
func ServingWorkers(ctx context.Context, nc *nats.Conn, route string) (int, error) {
	data, _ := json.Marshal(agentRequest{Route: route})
	ctx, cancel := context.WithTimeout(ctx, agentTimeout)
	defer cancel()
	// In its own identity's name (agentlanes.go); unscoped where a stock
	// server's authorization block predates that subject.
	own := agentSubject + "workers." + replyIdentity(nc.Opts.InboxPrefix, "")
	m, err := unlessRefused(ctx, nc, own, func(ctx context.Context) (*nats.Msg, error) {
		return nc.RequestWithContext(ctx, own, data)
	})
	if errors.Is(err, ErrAuth) {
		m, err = nc.RequestWithContext(ctx, agentSubject+"workers", data)
	}
	if errors.Is(err, nats.ErrNoResponders) {
		return 0, errNoAgent
	}
	if err != nil {
		return 0, fmt.Errorf("%w: ask the engine for the workers of %s: %w", ErrEngine, route, err)
	}
	var resp agentResponse
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return 0, fmt.Errorf("%w: the engine's answer: %w", ErrEngine, err)
	}
	if resp.Error != "" {
		return 0, fmt.Errorf("%w: the engine refused: %s", ErrEngine, resp.Error)
	}
	return resp.Workers, nil
}
