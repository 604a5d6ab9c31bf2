package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// With several agents, a job handed back with a delay is kept by the
// agent that served the hand-back (handoff.go), and a worker's pulls go
// to any agent: with N agents, N-1 of another worker's pulls in N missed
// it, each waiting out its pull for jobs JetStream did not have. So each
// agent tells the others, on newsSubject, which routes it keeps jobs of
// and for whom (the identities that handed them back), when that changes
// and every keepsNewsEvery while it keeps any; an agent a pull reaches
// that keeps none of the route's jobs the puller may take, while another
// does, hands the pull on to that agent (relaySubject plus its id),
// which serves it as its own: its kept jobs first, then JetStream's. A
// relayed pull is never handed on again, and one the other agent refuses
// (stopping, busy), or that no agent listens for, is served where it
// landed; one with no answer by its deadline is ended with no job there,
// never served by both (review23).

// relaySubject, followed by an agent's id, carries a pull another agent
// hands on to it. Only the admin identity (the agents') may publish or
// hear it, as peerSubject.
const relaySubject = "mdap.agents.pull."

// The headers of a relayed pull: the worker's subject (which names its
// identity) and the reply subject its jobs go to.
const (
	relaySubjectHeader = "Mdap-Relay-Subject"
	relayReplyHeader   = "Mdap-Relay-Reply"
)

// relayWait is the least time a pull must have left to be handed on,
// and how long past the pull's deadline the relaying agent waits for the
// other's answer before it ends the pull itself.
const relayWait = 250 * time.Millisecond

// relayCheckEvery is how long an agent fetches at a time for a pull that
// may be handed on (another agent kept jobs of its route lately), so
// that news of such jobs soon moves it.
const relayCheckEvery = 100 * time.Millisecond

// keepsNewsEvery is how often an agent keeping jobs tells the others so
// again, and keepsNewsTTL how long another trusts it without news: an
// agent that stopped, or lost its connection, is soon no longer asked.
const (
	keepsNewsEvery = time.Second
	keepsNewsTTL   = 3 * keepsNewsEvery
)

// maxKeepsKeys bounds the identities named for one route in an agent's
// news; past it the route is kept "for many" (a nil list), which any
// worker's pull is handed on for.
const maxKeepsKeys = 16

// keptRoutes is what an agent keeps jobs of: by route token, the identity
// keys that handed them back, sorted (nil: more than maxKeepsKeys).
type keptRoutes map[string][]string

// summary is what k keeps at now: the jobs whose delay has not passed.
func (k *handoffs) summary(now time.Time) keptRoutes {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := keptRoutes{}
	for route, jobs := range k.jobs {
		var from []string
		for _, h := range jobs {
			if now.Before(h.until) && !slices.Contains(from, h.from) {
				from = append(from, h.from)
			}
		}
		switch {
		case len(from) > maxKeepsKeys:
			out[route] = nil
		case len(from) > 0:
			slices.Sort(from)
			out[route] = from
		}
	}
	return out
}

// hasFor reports whether k keeps a job of route, its delay not passed
// at now, that another identity than key handed back.
func (k *handoffs) hasFor(route, key string, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.ContainsFunc(k.jobs[route], func(h *handoff) bool { return h.from != key && now.Before(h.until) })
}

// peerKeeps are the other agents' news of what they keep.
type peerKeeps struct {
	mu     sync.Mutex
	by     map[string]peerKeep  // by agent id
	lately map[string]time.Time // by route token: when news last said an agent keeps jobs of it
}

// peerKeep is one agent's latest news of what it keeps.
type peerKeep struct {
	keeps keptRoutes
	at    time.Time
}

// set records the news of agent at now; an agent keeping nothing is
// forgotten.
func (p *peerKeeps) set(agent string, k keptRoutes, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	maps.DeleteFunc(p.lately, func(_ string, at time.Time) bool { return now.Sub(at) > keepsNewsTTL })
	if len(k) == 0 {
		delete(p.by, agent)
		return
	}
	if p.by == nil {
		p.by, p.lately = map[string]peerKeep{}, map[string]time.Time{}
	}
	p.by[agent] = peerKeep{keeps: k, at: now}
	for route := range k {
		p.lately[route] = now
	}
}

// recent reports whether news at most keepsNewsTTL old at now said an
// agent kept jobs of route: a sitter handing back every job makes an
// agent keep some most of the time, now and then none.
func (p *peerKeeps) recent(route string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.lately[route]
	return ok && now.Sub(at) <= keepsNewsTTL
}

// keeper returns an agent whose news, at most keepsNewsTTL old at now,
// says it keeps jobs of route that another identity than key handed
// back, or "".
func (p *peerKeeps) keeper(route, key string, now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for agent, pk := range p.by {
		if now.Sub(pk.at) > keepsNewsTTL {
			delete(p.by, agent)
			continue
		}
		from, ok := pk.keeps[route]
		if ok && (from == nil || len(from) > 1 || from[0] != key) {
			return agent
		}
	}
	return ""
}

// tellKeeps tells the other agents what this one keeps at now, when it
// changed since last (what it told then, when) or every keepsNewsEvery
// while it keeps any; it returns what it told and when.
func (a *Agent) tellKeeps(now time.Time, last keptRoutes, told time.Time) (keptRoutes, time.Time) {
	k := a.handoffs.summary(now)
	same := maps.EqualFunc(k, last, slices.Equal[[]string])
	if same && (len(k) == 0 || now.Sub(told) < keepsNewsEvery) {
		return last, told
	}
	a.tell(peerNews{Keeps: &k})
	return k, now
}

// relayPull hands the pull m of the worker id (req, to be answered by
// deadline) on to another agent that keeps jobs of its route the worker
// may take, when this one keeps none, and reports whether that agent
// took it up (and so answers it, by the same deadline).
func (a *Agent) relayPull(ctx context.Context, id string, m *nats.Msg, req pullRequest, deadline time.Time) bool {
	now, key, route := time.Now(), identityKey(id), RouteToken(req.Route)
	if req.Wait = deadline.Sub(now); ctx.Err() != nil || req.Wait < relayWait || a.handoffs.hasFor(route, key, now) {
		return false
	}
	to := a.peerKeeps.keeper(route, key, now)
	if to == "" {
		return false
	}
	relay := nats.NewMsg(relaySubject + to)
	relay.Header.Set(relaySubjectHeader, m.Subject)
	relay.Header.Set(relayReplyHeader, m.Reply)
	relay.Data, _ = json.Marshal(req)
	// Once sent, the pull may be taken up however late the answer comes
	// (a far or loaded agent): served here too, its jobs went out after
	// the other agent's end marker, to a pull its worker no longer read,
	// each held for the ack wait and struck against the worker (review23:
	// TestALateRelayAnswerServesThePullOnce). So it is served here only
	// if the other agent refused it, or none listens; with no answer by
	// the pull's deadline (and relayWait for the other's own end marker
	// to come first), or the engine stopping, it is ended with no job.
	rctx, cancel := context.WithDeadline(ctx, deadline.Add(relayWait))
	defer cancel()
	ans, err := a.nc.RequestMsgWithContext(rctx, relay)
	switch {
	case err == nil:
		return len(ans.Data) == 0
	case errors.Is(err, nats.ErrNoResponders):
		return false
	}
	reason := ""
	if ctx.Err() != nil {
		reason = "the engine is stopping"
	}
	endPull(a.nc, m.Reply, cmpOr(reason, "1"))
	return true
}

// onRelayedPull takes up a pull another agent handed on: it serves it
// as its own (never handing it on again) and answers the relaying agent
// with nothing, or with why it did not.
func (a *Agent) onRelayedPull(m *nats.Msg) {
	if !answerable(m.Reply) {
		return
	}
	pull := &nats.Msg{Subject: m.Header.Get(relaySubjectHeader), Reply: m.Header.Get(relayReplyHeader), Data: m.Data}
	rest, ok := strings.CutPrefix(pull.Subject, workSubject)
	if !ok || !strings.HasSuffix(rest, "."+workPull) || !answerable(pull.Reply) {
		_ = m.Respond([]byte("not a pull"))
		return
	}
	if reason := a.startWork(pull, true); reason != "" {
		_ = m.Respond([]byte(reason))
		return
	}
	_ = m.Respond(nil)
}
