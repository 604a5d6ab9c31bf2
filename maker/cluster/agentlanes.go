package cluster

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// The agent answers the requests of coordinators (their Drawers, journal
// streams, task queues, withdrawals, worker counts) and workers' route
// requests in lanes, one for each name a request's subject gives
// (mdap.engine.<kind>.<name>: a run's, or an identity's key, which the
// sender's permissions bind it to), so that one credential sending
// requests faster than the agent serves them delays its own lane only.
// The subscription's callback only queues (it never waits on JetStream),
// so a worker's pull is never behind a flood of other requests. A lane
// holds at most laneDepth requests and is served laneWidth at a time;
// past its depth a request is refused at once with a wait to ask again
// after (agentResponse.RetryIn), which askAgent honours.
const (
	laneDepth = 64
	laneWidth = 2
	// maxLanes bounds the lanes at once: only the shared coordinator
	// (trusted with every run) and clients of a server without roles
	// may name runs they like.
	maxLanes = 4096
	// laneRetry is how long a refused request waits before asking again.
	laneRetry = 100 * time.Millisecond
)

// lanes queues the agent's requests by lane and serves them.
type lanes struct {
	mu     sync.Mutex
	byName map[string]*lane
	serve  func(*nats.Msg)
	wg     *sync.WaitGroup // the agent's: Stop waits for the lanes' goroutines
}

type lane struct {
	queue []*nats.Msg
	busy  int // goroutines serving it
}

// laneOf names m's lane: its kind and the name after it, or its kind
// alone for a request of an older client that names none.
func laneOf(subject string) string {
	rest := strings.TrimPrefix(subject, agentSubject)
	kind, name, _ := strings.Cut(rest, ".")
	name, _, _ = strings.Cut(name, ".")
	return kind + "." + name
}

// add queues m on its lane and starts a goroutine for the lane if it has
// fewer than laneWidth; it never waits. A full lane, or a new lane past
// maxLanes, is a refusal, returned for the caller to send (refuse). The
// caller holds the agent's lock, so that no goroutine starts once Stop
// waits for them.
func (l *lanes) add(m *nats.Msg) (refusal string) {
	name := laneOf(m.Subject)
	l.mu.Lock()
	ln := l.byName[name]
	switch {
	case ln == nil && len(l.byName) >= maxLanes:
		refusal = fmt.Sprintf("the engine has %d requesters waiting: ask again", maxLanes)
	case ln != nil && len(ln.queue) >= laneDepth:
		refusal = fmt.Sprintf("the engine holds %d requests of %s waiting already (a client asks faster than the engine answers): ask again", laneDepth, name)
	}
	if refusal != "" {
		l.mu.Unlock()
		return refusal
	}
	if ln == nil {
		if l.byName == nil {
			l.byName = map[string]*lane{}
		}
		ln = &lane{}
		l.byName[name] = ln
	}
	ln.queue = append(ln.queue, m)
	start := ln.busy < laneWidth
	if start {
		ln.busy++
		l.wg.Add(1)
	}
	l.mu.Unlock()
	if start {
		go l.drain(name, ln)
	}
	return ""
}

// drain serves ln's requests until it has none; the last goroutine of an
// empty lane removes it.
func (l *lanes) drain(name string, ln *lane) {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		if len(ln.queue) == 0 {
			ln.busy--
			if ln.busy == 0 {
				delete(l.byName, name)
			}
			l.mu.Unlock()
			return
		}
		m := ln.queue[0]
		ln.queue[0] = nil
		ln.queue = ln.queue[1:]
		l.mu.Unlock()
		l.serve(m)
	}
}

// refuseBusy answers m with reason and a wait to ask again after.
func refuseBusy(m *nats.Msg, reason string) {
	data, _ := json.Marshal(agentResponse{Error: reason, RetryIn: laneRetry, Busy: true})
	_ = m.Respond(data)
}
