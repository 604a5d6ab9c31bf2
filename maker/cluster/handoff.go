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
// NAK did. A job kept here is given to a pull of this agent only: with
// several agents, another agent's pulls see it after the delay.

// maxHandoffs bounds the jobs an agent keeps for other workers; past it
// a hand-back is a delayed NAK.
const maxHandoffs = 4096

// handoffTick is how often the agent renews the ack wait of the jobs it
// keeps (each at a third of its ack wait: at least a second) and hands
// back to JetStream those whose delay passed.
const handoffTick = 100 * time.Millisecond

// handoff is a job the agent keeps for another worker.
type handoff struct {
	msg   jetstream.Msg
	seq   uint64
	route string        // its route's token
	from  string        // the identity key that handed it back
	until time.Time     // back to JetStream then
	wait  time.Duration // its route's ack wait
	kept  time.Time     // its ack wait's last renewal
}

// handoffs are the jobs an agent keeps for other workers.
type handoffs struct {
	mu    sync.Mutex
	jobs  []*handoff
	ready chan struct{} // closed, and replaced, when a job comes
}

// routeOfJob is the route token of a job's subject (mdap.jobs.<route>.<publisher>).
func routeOfJob(subject string) string {
	route, _, _ := strings.Cut(strings.TrimPrefix(subject, jobsSubject), ".")
	return route
}

// handBack hands the job msg (stream sequence seq) back from the worker
// identity key for delay: kept for another worker's pull until then
// (its ack wait, wait, renewed), or, for a delay of at most avoidDelay,
// a job it cannot tell apart or past maxHandoffs, a delayed NAK.
func (a *Agent) handBack(msg jetstream.Msg, seq uint64, key string, delay, wait time.Duration) error {
	if delay <= avoidDelay || seq == 0 {
		return msg.NakWithDelay(delay)
	}
	if err := msg.InProgress(); err != nil {
		return err
	}
	now := time.Now()
	if !a.handoffs.put(&handoff{msg: msg, seq: seq, route: routeOfJob(msg.Subject()), from: key, until: now.Add(delay), wait: wait, kept: now}) {
		return msg.NakWithDelay(delay)
	}
	return nil
}

// put keeps h, and wakes the pulls waiting; false when maxHandoffs are
// kept already.
func (k *handoffs) put(h *handoff) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.jobs) >= maxHandoffs {
		return false
	}
	k.jobs = append(k.jobs, h)
	if k.ready != nil {
		close(k.ready)
		k.ready = nil
	}
	return true
}

// waiter is closed when the next job comes.
func (k *handoffs) waiter() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ready == nil {
		k.ready = make(chan struct{})
	}
	return k.ready
}

// take removes and returns the first job kept for route that may go to
// the worker identity key (not its own hand-back, and accepted by may),
// or nil.
func (k *handoffs) take(route, key string, may func(jetstream.Msg) bool) *handoff {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := slices.IndexFunc(k.jobs, func(h *handoff) bool { return h.route == route && h.from != key && may(h.msg) })
	if i < 0 {
		return nil
	}
	h := k.jobs[i]
	k.jobs = slices.Delete(k.jobs, i, i+1)
	return h
}

// drop removes the job of stream sequence seq (withdrawn by its
// coordinator), and says whether it was kept.
func (k *handoffs) drop(seq uint64) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := len(k.jobs)
	k.jobs = slices.DeleteFunc(k.jobs, func(h *handoff) bool { return h.seq == seq })
	return len(k.jobs) < n
}

// due removes and returns the jobs whose delay passed by now (every one
// when all), and returns those whose ack wait is due for renewal,
// marked renewed at now.
func (k *handoffs) due(now time.Time, all bool) (back, renew []*handoff) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.jobs = slices.DeleteFunc(k.jobs, func(h *handoff) bool {
		if all || !now.Before(h.until) {
			back = append(back, h)
			return true
		}
		if now.Sub(h.kept) >= h.wait/3 {
			h.kept = now
			renew = append(renew, h)
		}
		return false
	})
	return back, renew
}

// keepHandoffs renews the ack wait of the jobs kept for other workers,
// and hands back to JetStream those whose delay passed, until done is
// closed (the agent stops); then it hands back every one.
func (a *Agent) keepHandoffs(done <-chan struct{}) {
	t := time.NewTicker(handoffTick)
	defer t.Stop()
	for {
		stop := false
		select {
		case <-done:
			stop = true
		case <-t.C:
		}
		back, renew := a.handoffs.due(time.Now(), stop)
		for _, h := range renew {
			_ = h.msg.InProgress()
		}
		for _, h := range back {
			_ = h.msg.Nak()
		}
		if stop {
			return
		}
	}
}

// closedChan is closed: a receive from it never waits.
var closedChan = func() <-chan struct{} { c := make(chan struct{}); close(c); return c }()
