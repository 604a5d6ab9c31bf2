package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/maker/observe"
	"github.com/nats-io/nats-server/v2/server"
)

// EngineStats is what an operator of an embedded engine watches, read at
// once by Server.Stats: the engine's streams (sample jobs and replies,
// journals, tasks, leases and results), its clients and the requests its
// agent answered.
type EngineStats struct {
	// Streams are the engine's streams by name (MDAP_JOBS, KV_MDAP_LEASES,
	// ...; only mdap's, so the set is small and fixed): the run keys'
	// streams are summed under one name a kind, RunStreamPrefix+"*",
	// RunQueuePrefix+"*", "KV_"+RunResultsPrefix+"*" and
	// "KV_"+RunLeasesPrefix+"*" (List shows each run's bytes).
	Streams map[string]StreamStats
	// Connections is the number of clients connected now (workers,
	// coordinators, the engine's own connection).
	Connections int
	// Workers is the number of distinct worker identities that pulled
	// jobs of some route through the agent within the last 30 seconds
	// (with roles; 0 on a server without them, whose workers pull
	// directly: see StreamStats.Waiting of MDAP_JOBS).
	Workers int
	// Served and Refused count the requests the agent answered since the
	// server started (with roles): consumers made, pulls and acts on jobs
	// served, and those refused (not the role's, a busy or stopping
	// engine, a job gone).
	Served, Refused int64
}

// StreamStats is one stream's state and, summed over its consumers,
// theirs.
type StreamStats struct {
	// Messages and Bytes are what the stream holds now (for MDAP_JOBS:
	// jobs queued or held by a worker; for KV_MDAP_LEASES: leases held).
	Messages, Bytes uint64
	// Consumers is the stream's consumers: of MDAP_JOBS, one per route
	// served; of MDAP_REPLIES, one per coordinator.
	Consumers int
	// Pending is the messages its consumers have not delivered yet;
	// AckPending those delivered and not yet acknowledged (of MDAP_JOBS:
	// jobs a worker holds, or a dead worker's awaiting redelivery);
	// Waiting the pull requests waiting (of MDAP_JOBS: workers with a free
	// place).
	Pending    uint64
	AckPending int
	Waiting    int
}

// engineStream reports whether name is one of the engine's streams.
func engineStream(name string) bool {
	return strings.HasPrefix(name, "MDAP_") || strings.HasPrefix(name, "KV_MDAP_")
}

// Stats returns the engine's state now. Cost: the server's /jsz with
// every stream and consumer of the accounts (a few microseconds per
// consumer). Errors: the server's, when JetStream cannot report.
func (s *Server) Stats() (EngineStats, error) {
	st := EngineStats{Streams: map[string]StreamStats{}, Connections: s.ns.NumClients()}
	info, err := s.ns.Jsz(&server.JSzOptions{Accounts: true, Streams: true, Consumer: true})
	if err != nil {
		return st, fmt.Errorf("%w: the engine's streams: %w", ErrEngine, err)
	}
	for _, acc := range info.AccountDetails {
		for _, sd := range acc.Streams {
			if !engineStream(sd.Name) {
				continue
			}
			name := sd.Name
			for _, prefix := range []string{RunStreamPrefix, RunQueuePrefix, "KV_" + RunResultsPrefix, "KV_" + RunLeasesPrefix} {
				if strings.HasPrefix(name, prefix) {
					name = prefix + "*"
				}
			}
			ss := st.Streams[name]
			ss.Messages += sd.State.Msgs
			ss.Bytes += sd.State.Bytes
			ss.Consumers += sd.State.Consumers
			for _, ci := range sd.Consumer {
				if ci == nil {
					continue
				}
				ss.Pending += ci.NumPending
				ss.AckPending += ci.NumAckPending
				ss.Waiting += ci.NumWaiting
			}
			st.Streams[name] = ss
		}
	}
	if a := s.agent; a != nil {
		st.Workers = a.pulls.identities()
		st.Served, st.Refused = a.asked.served.Load(), a.asked.refused.Load()
	}
	return st, nil
}

// agentCounts counts the requests an Agent answered.
type agentCounts struct {
	served, refused atomic.Int64
}

// count counts one answer: refused when it carries a refusal.
func (c *agentCounts) count(refused bool) {
	if refused {
		c.refused.Add(1)
		return
	}
	c.served.Add(1)
}

// identities counts the distinct worker identities that pulled any
// route's jobs within pullerIdle.
func (p *pullers) identities() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]bool{}
	for _, m := range p.last {
		for key, at := range m {
			if time.Since(at) <= pullerIdle {
				seen[key] = true
			}
		}
	}
	return len(seen)
}

// Figures is the engine's state as maker/observe reports it
// (observe.Watcher.ObserveEngine, maker nats --metrics-addr): Stats in
// observe's terms, false when the streams could not be read (Stats's
// error), so that the collection reports nothing. Cost: Stats's.
func (s *Server) Figures(context.Context) (observe.EngineFigures, bool) {
	st, err := s.Stats()
	if err != nil {
		return observe.EngineFigures{}, false
	}
	f := observe.EngineFigures{Streams: map[string]observe.StreamFigures{}, Connections: int64(st.Connections),
		Workers: int64(st.Workers), Served: st.Served, Refused: st.Refused}
	for name, ss := range st.Streams {
		f.Streams[name] = observe.StreamFigures{Messages: int64(ss.Messages), Bytes: int64(ss.Bytes), Consumers: int64(ss.Consumers),
			Undelivered: int64(ss.Pending), AckPending: int64(ss.AckPending), Waiting: int64(ss.Waiting)}
	}
	return f, true
}
