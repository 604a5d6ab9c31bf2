package cluster

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A hand-back with a delay delays the job for the worker that handed it
// back only. JetStream's delayed NAK holds a job back from every worker
// until the delay passes, and then delivers it to whichever pull waits
// first: often the same worker's again. So a worker credential handing
// back every job it was sent with a delay of a second stalled another
// coordinator's run to its deadline (its jobs went back to it at each
// redelivery until their deliveries were spent), and with a minute's
// delay each of its jobs waited a minute. The agent keeps such a job
// instead, renewing its ack wait, and gives it to the next pull of
// another worker identity that may take it (spread.go's keeps, and not
// a key the pull skips); once the delay passes with no taker it hands
// the job back to JetStream at once. A job handed back by the only
// worker serving its route so spends no delivery more than a delayed
// NAK did. A job is kept no longer than its expiry (its TTL, its
// coordinator's timeout: a coordinator that died withdraws nothing) nor
// once JetStream delivered it again (its ack wait passed while it was
// kept: supersede), so no worker is given a job that left the stream or
// that another holds. A pull is given every kept job it may take, up to
// its places. One identity has at most maxHandoffsPerKey jobs kept;
// while it has, its pulls fetch nothing (atCap), and a hand-back past
// the limits is a NAK of at most avoidDelay, never the worker's delay.
// With several agents, a pull reaching another is handed on to this one
// (handoffpeers.go).

// maxHandoffs bounds the jobs an agent keeps for other workers, and
// maxHandoffsPerKey those one worker identity handed back (so no one
// credential fills the place the others' hand-backs need); past them a
// hand-back is a delayed NAK.
const (
	maxHandoffs       = 1024
	maxHandoffsPerKey = maxHandoffs / 8
)

// handoffTick is how often the agent renews the ack wait of the jobs it
// keeps (each at a third of its ack wait: at least a second) and hands
// back to JetStream those whose delay passed.
const handoffTick = 100 * time.Millisecond

// handoff is a job the agent keeps for another worker.
type handoff struct {
	msg   jetstream.Msg
	seq   uint64        // its stream sequence
	n     uint64        // its delivery count (JetStream's NumDelivered)
	route string        // its route's token
	from  string        // the identity key that handed it back
	until time.Time     // back to JetStream then: the delay's end, or the job's expiry if sooner
	wait  time.Duration // its route's ack wait
	kept  time.Time     // its ack wait's last renewal
}

// handoffs are the jobs an agent keeps for other workers, by route.
type handoffs struct {
	mu    sync.Mutex
	jobs  map[string][]*handoff    // by route token
	ready map[string]chan struct{} // by route token: closed, and replaced, when a job of it comes
	n     int                      // jobs kept
	by    map[string]int           // jobs kept, by the identity that handed them back
}

// routeOfJob is the route token of a job's subject (mdap.jobs.<route>.<publisher>).
func routeOfJob(subject string) string {
	route, _, _ := strings.Cut(strings.TrimPrefix(subject, jobsSubject), ".")
	return route
}

// expiry is when the job msg leaves the stream by its TTL (its
// coordinator's timeout, set by the Drawer that published it); zero
// for one without.
func expiry(msg jetstream.Msg) time.Time {
	md, err := msg.Metadata()
	ttl, perr := time.ParseDuration(msg.Headers().Get(jetstream.MsgTTLHeader))
	if err != nil || perr != nil || ttl <= 0 {
		return time.Time{}
	}
	return md.Timestamp.Add(ttl)
}

// handBack hands the job msg (stream sequence seq, its n-th delivery)
// back from the worker identity key for delay: kept for another
// worker's pull until then (keep); a job not kept (a delay of at most
// avoidDelay, a job it cannot tell apart, or one past the limits) is a
// NAK of at most avoidDelay: the worker's delay is never imposed on
// every worker (review22: past the cap, it was).
func (a *Agent) handBack(msg jetstream.Msg, seq, n uint64, key string, delay, wait time.Duration) error {
	if delay <= avoidDelay || seq == 0 {
		return msg.NakWithDelay(delay)
	}
	if !a.keep(msg, seq, n, key, delay, wait) {
		return msg.NakWithDelay(avoidDelay)
	}
	return nil
}

// keep keeps the job msg, handed back from key, for another worker's
// pull for delay at most (its ack wait, wait, renewed), and says whether
// it did: not past maxHandoffs or key's maxHandoffsPerKey.
func (a *Agent) keep(msg jetstream.Msg, seq, n uint64, key string, delay, wait time.Duration) bool {
	if a.handoffs.full(key) || msg.InProgress() != nil {
		return false
	}
	now := time.Now()
	until := now.Add(delay)
	if e := expiry(msg); !e.IsZero() && e.Before(until) {
		until = e
	}
	return a.handoffs.put(&handoff{msg: msg, seq: seq, n: n, route: routeOfJob(msg.Subject()), from: key, until: until, wait: wait, kept: now})
}

// full reports whether a job handed back from key would be refused.
func (k *handoffs) full(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n >= maxHandoffs || k.by[key] >= maxHandoffsPerKey
}

// atCap reports whether the identity key keeps maxHandoffsPerKey jobs
// handed back: its pulls fetch nothing until fewer are kept, so that
// the jobs it would skip stay in JetStream for other workers.
func (k *handoffs) atCap(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.by[key] >= maxHandoffsPerKey
}

// put keeps h, and wakes the pulls of its route waiting; false past
// maxHandoffs, or maxHandoffsPerKey of h's identity.
func (k *handoffs) put(h *handoff) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n >= maxHandoffs || k.by[h.from] >= maxHandoffsPerKey {
		return false
	}
	if k.jobs == nil {
		k.jobs, k.by = map[string][]*handoff{}, map[string]int{}
	}
	k.jobs[h.route] = append(k.jobs[h.route], h)
	k.n++
	k.by[h.from]++
	if c := k.ready[h.route]; c != nil {
		close(c)
		delete(k.ready, h.route)
	}
	return true
}

// waiter is closed when the next job of route comes.
func (k *handoffs) waiter(route string) <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ready == nil {
		k.ready = map[string]chan struct{}{}
	}
	c := k.ready[route]
	if c == nil {
		c = make(chan struct{})
		k.ready[route] = c
	}
	return c
}

// take removes and returns the first job kept for route before its
// delay's end at now that may go to the worker identity key (not its
// own hand-back, and accepted by may), or nil.
func (k *handoffs) take(route, key string, now time.Time, may func(jetstream.Msg) bool) *handoff {
	k.mu.Lock()
	defer k.mu.Unlock()
	jobs := k.jobs[route]
	i := slices.IndexFunc(jobs, func(h *handoff) bool { return h.from != key && now.Before(h.until) && may(h.msg) })
	if i < 0 {
		return nil
	}
	h := jobs[i]
	k.remove(func(o *handoff) bool { return o == h })
	return h
}

// remove removes the jobs gone says, and returns them. k.mu is held.
func (k *handoffs) remove(gone func(*handoff) bool) (out []*handoff) {
	for route, jobs := range k.jobs {
		k.jobs[route] = slices.DeleteFunc(jobs, func(h *handoff) bool {
			if !gone(h) {
				return false
			}
			out = append(out, h)
			k.n--
			if k.by[h.from]--; k.by[h.from] == 0 {
				delete(k.by, h.from)
			}
			return true
		})
		if len(k.jobs[route]) == 0 {
			delete(k.jobs, route)
		}
	}
	return out
}

// drop removes the job of stream sequence seq (withdrawn by its
// coordinator), and says whether it was kept.
func (k *handoffs) drop(seq uint64) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.remove(func(h *handoff) bool { return h.seq == seq })) > 0
}

// supersede removes the job of stream sequence seq if kept from a
// delivery before its n-th (JetStream delivered it again, here or
// through another agent: its ack wait passed while it was kept), so
// that no two workers are given it.
func (k *handoffs) supersede(seq, n uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n == 0 { // every delivery asks: the walk only when something is kept
		return
	}
	k.remove(func(h *handoff) bool { return h.seq == seq && h.n < n })
}

// due removes and returns the jobs whose delay passed by now (every one
// when all), and returns those whose ack wait is due for renewal,
// marked renewed at now.
func (k *handoffs) due(now time.Time, all bool) (back, renew []*handoff) {
	k.mu.Lock()
	defer k.mu.Unlock()
	back = k.remove(func(h *handoff) bool { return all || !now.Before(h.until) })
	for _, jobs := range k.jobs {
		for _, h := range jobs {
			if now.Sub(h.kept) >= h.wait/3 {
				h.kept = now
				renew = append(renew, h)
			}
		}
	}
	return back, renew
}

// keepHandoffs renews the ack wait of the jobs kept for other workers,
// and hands back to JetStream those whose delay passed, until done is
// closed (the agent stops); then it hands back every one.
func (a *Agent) keepHandoffs(done <-chan struct{}) {
	t := time.NewTicker(handoffTick)
	defer t.Stop()
	var told keptRoutes
	var at time.Time
	for {
		stop := false
		select {
		case <-done:
			stop = true
		case <-t.C:
		}
		now := time.Now()
		back, renew := a.handoffs.due(now, stop)
		for _, h := range renew {
			_ = h.msg.InProgress()
		}
		for _, h := range back {
			_ = h.msg.Nak()
		}
		told, at = a.tellKeeps(now, told, at)
		if stop {
			return
		}
	}
}

// closedChan is closed: a receive from it never waits.
var closedChan = func() <-chan struct{} { c := make(chan struct{}); close(c); return c }()
