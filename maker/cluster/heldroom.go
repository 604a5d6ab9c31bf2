package cluster

import (
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// A worker identity's room is how many of its route's jobs it may hold
// through the agent at once: delivered by its pulls and not yet
// acknowledged, handed back or terminated. Without it, one worker
// credential keeping many pulls open and never answering held nearly
// every job of its route, each for the ack wait, again and again
// (review11: another run decided one step in 25 s beside an honest
// worker with free places). A pull asking for more than the room left
// is trimmed to it.
//
// The room is the places the identity's workers declare (Inflight; a
// worker that declares none counts maxPull) plus maxPull: an honest
// worker holds its calls in progress and the jobs of replies waiting
// parked for their Drawer (parked.go), whose places are free again. It
// tightens when the identity lets a held job time out, which an honest
// worker never does while it lives (it reports progress every third of
// the ack wait): each job whose ack wait passes without an act (or that
// it hands back after sitting on it for over two thirds of its ack
// wait) sets the room to half of the lesser of the room and the jobs it
// then held, so an identity that answers nothing gets no job past its
// first round. A room at zero opens to one job after twice the ack
// wait, then after twice as long at each zero that follows, up to 32
// times the ack wait (roomProbes). An identity that acted in time on
// another job since the one that timed out was delivered keeps a room
// of one at least (a job lost on its way, or a worker late under load),
// as does one whose act on the job timed out comes late, once until its
// next answer; each job it acknowledges in time doubles its room, back
// to the whole. A job its coordinator withdrew (its call timed out, or
// its step was decided without it) times out an ack wait after the
// withdrawal, progress reports or not: its worker is told at once by its
// coordinator's notice, and again in the answer to its next progress
// report (a notice may be lost, or never sent), and an honest one
// terminates it (a sitter reporting progress on jobs it never answers
// kept its room before). An acknowledgement with no reply stored is a
// strike too (ackcheck.go).
//
// A job that may never have reached its worker, or whose acts may have
// found no agent, is no strike: one held when the agent's own connection
// was cut (its worker's acts went nowhere meanwhile: CI34, a cluster
// node killed under the agent, had every honest room at zero and the
// run failed), and one its worker says a pull lost on the way (lost:
// the pull spanned the worker's reconnection, and the job did not come;
// it is handed back at once, and struck as a late hand-back is when
// held over two thirds of its ack wait).
//
// The book is per identity key (a credential: its connections on the
// embedded server count together) and per agent: each agent of an
// engine keeps its own.
type rooms struct {
	mu      sync.Mutex
	ackWait time.Duration // the engine's, the unit of how long a room stays at zero; 0 means DefaultAckWait
	// cuts counts the cuts of the agent's connection so far (nil: none
	// can happen, as in process); it must not take mu.
	cuts func() uint64
	log  *slog.Logger // nil: no log
	by   map[string]*room
}

// roomProbes bounds the doublings of how long a room stays at zero: at
// the default ack wait, an identity answering nothing holds one job for
// 10 s at most every 5 minutes and 20 s, once past its first zeros.
const roomProbes = 5

// roomIdle: a book entry whose identity has neither pulled nor held a
// job for this long is forgotten once its room is whole; a tightened
// one is kept an hour, so that waiting does not restore a room.
const roomIdle = time.Hour

// room is one identity key's book.
type room struct {
	key      string
	places   map[string]declared // by connection identity
	limit    int                 // after tightening; -1: none (the whole room)
	reserved int                 // places pulls in progress asked for and have not filled
	held     map[string]*heldDue // by delivery handle
	seqs     map[uint64]string   // handle by stream sequence, to spot a redelivery
	acted    time.Time           // its last act in time on a job it held
	strikes  int                 // times the room fell to zero since its last answer
	reopen   time.Time           // when a room at zero opens to one job
	seen     time.Time           // last pull, delivery or act
}

type declared struct {
	places int
	at     time.Time
}

type heldDue struct {
	seq       uint64
	id        string        // the connection identity it was delivered to
	withdrawn time.Time     // when its coordinator withdrew it; zero: not withdrawn
	pull      string        // the pull it was delivered on, as its worker names it
	cuts      uint64        // the agent's cuts at its delivery
	wait      time.Duration // the route's ack wait
	since     time.Time     // the delivery
	last      time.Time     // the delivery or its last progress report
}

// entry returns key's book, made if new. The caller holds r.mu.
func (r *rooms) entry(key string, now time.Time) *room {
	rm := r.by[key]
	if rm == nil {
		if r.by == nil {
			r.by = map[string]*room{}
		}
		rm = &room{key: key, places: map[string]declared{}, limit: -1, held: map[string]*heldDue{}, seqs: map[uint64]string{}}
		r.by[key] = rm
	}
	rm.seen = now
	return rm
}

// whole is the room untightened: the places its connections declared
// within pullerIdle (maxPull for one declaring none) plus maxPull.
func (rm *room) whole(now time.Time) int {
	sum := 0
	for id, d := range rm.places {
		if now.Sub(d.at) > pullerIdle {
			delete(rm.places, id)
			continue
		}
		sum += d.places
	}
	return min(sum, MaxInflight) + maxPull
}

// size is the room now, after expiring the held jobs whose ack wait
// passed.
func (r *rooms) size(rm *room, now time.Time) int {
	for h, d := range rm.held {
		due := d.last.Add(d.wait)
		if w := d.withdrawn.Add(d.wait); !d.withdrawn.IsZero() && w.Before(due) {
			// Withdrawn: its worker was told to drop it (and does at
			// once); progress reports on it keep no room.
			due = w
		}
		if !now.Before(due) {
			r.strike(rm, h, due)
		}
	}
	switch {
	case rm.limit < 0:
		return rm.whole(now)
	case rm.limit == 0 && !now.Before(rm.reopen):
		rm.limit = 1
	}
	return min(rm.limit, rm.whole(now))
}

// strike drops the held job h, which timed out at now: the room
// becomes half of the lesser of itself and the jobs held with h, unless
// the agent's connection was cut since its delivery.
func (r *rooms) strike(rm *room, h string, now time.Time) {
	if d := rm.held[h]; d != nil && r.cuts != nil && r.cuts() != d.cuts {
		r.drop(rm, h)
		return
	}
	cur := rm.limit
	if cur < 0 {
		cur = rm.whole(now)
	}
	next := min(cur, len(rm.held)) / 2
	if d := rm.held[h]; next == 0 && d != nil && d.withdrawn.IsZero() && rm.acted.After(d.since) {
		// It acted on another job in time meanwhile: a job lost on the
		// way or a worker late under load, not one sitting on its jobs.
		next = 1
	}
	r.drop(rm, h)
	if next == 0 && cur > 0 {
		rm.strikes++
		rm.reopen = now.Add(cmpOr(r.ackWait, DefaultAckWait) << min(rm.strikes, roomProbes))
	}
	if r.log != nil && next < cur {
		r.log.Warn("a worker identity let a job time out: its room of jobs tightened",
			"worker", truncate(rm.key, 12), "room", next, "was", cur, "held", len(rm.held), "reopens", rm.reopen)
	}
	rm.limit = next
}

func (r *rooms) drop(rm *room, h string) {
	if d, ok := rm.held[h]; ok {
		delete(rm.seqs, d.seq)
		delete(rm.held, h)
	}
}

// reserve records that connection id declares places (0: none) and
// reserves for its pull up to want jobs of its key's room left; it
// returns how many, which the pull gives back with unreserve.
func (r *rooms) reserve(id string, want, places int, now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.entry(identityKey(id), now)
	if places < 1 || places > MaxInflight {
		places = maxPull
	}
	rm.places[id] = declared{places: places, at: now}
	n := max(0, min(want, r.size(rm, now)-len(rm.held)-rm.reserved))
	rm.reserved += n
	return n
}

// refit trims a pull's reservation of have to its key's room left, which
// may have shrunk since; it returns what the pull keeps.
func (r *rooms) refit(id string, have int, now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.entry(identityKey(id), now)
	keep := max(0, min(have, r.size(rm, now)-len(rm.held)-(rm.reserved-have)))
	rm.reserved -= have - keep
	return keep
}

// unreserve gives back n places a pull reserved and did not fill.
func (r *rooms) unreserve(id string, n int) {
	if n == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.entry(identityKey(id), time.Now())
	rm.reserved = max(0, rm.reserved-n)
}

// hold turns one place a pull of id reserved into the delivery handle of
// the job of stream sequence seq (ack wait wait), if the room still has
// it: false when it shrank since (the caller hands the job back and
// keeps the reservation, to unreserve). A redelivery of a job the key
// holds means its ack wait passed: a strike first.
func (r *rooms) hold(id, handle, pull string, seq uint64, wait time.Duration, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.entry(identityKey(id), now)
	if h, ok := rm.seqs[seq]; ok {
		r.strike(rm, h, now)
	}
	if len(rm.held)+1 > r.size(rm, now) {
		return false
	}
	rm.reserved = max(0, rm.reserved-1)
	d := &heldDue{seq: seq, id: id, pull: pull, wait: wait, since: now, last: now}
	if r.cuts != nil {
		d.cuts = r.cuts()
	}
	rm.held[handle] = d
	rm.seqs[seq] = handle
	return true
}

// progress restarts the ack wait of id's delivery handle; it reports
// whether the job's coordinator withdrew it (its worker is to drop it).
func (r *rooms) progress(id, handle string, now time.Time) (withdrawn bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.entry(identityKey(id), now)
	d, ok := rm.held[handle]
	if !ok {
		r.late(rm)
		return false
	}
	d.last, rm.acted = now, now
	return !d.withdrawn.IsZero()
}

// late is an act on a job the book struck already: a worker that was
// late (its acts held up past the ack wait under load) rather than
// sitting. The first after the room fell to zero since its last answer
// opens it to one job at once; the next ones do nothing, so that a
// sitter acting late on purpose gains one job.
func (r *rooms) late(rm *room) {
	if rm.limit == 0 && rm.strikes == 1 {
		rm.limit = 1 // its next zero is its second strike
	}
}

// done releases id's delivery handle, answered (acknowledged: the room
// doubles) or handed back (NAKed or terminated: the room stays, unless
// the job sat over half its ack wait without word, which counts as its
// timing out). A handle the book no longer holds (timed out) is a
// late act.
func (r *rooms) done(id, handle string, answered bool, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.entry(identityKey(id), now)
	d, ok := rm.held[handle]
	switch {
	case !ok:
		r.late(rm)
	case !answered && now.Sub(d.last) > d.wait*2/3:
		r.strike(rm, handle, now)
	case answered:
		rm.acted = now
		r.drop(rm, handle)
		rm.strikes = 0
		if rm.limit >= 0 {
			rm.limit = max(1, 2*rm.limit)
			if rm.limit >= rm.whole(now) {
				rm.limit = -1
			}
		}
	default:
		rm.acted = now
		r.drop(rm, handle)
	}
}

// unanswered releases id's delivery handle, acknowledged with no reply
// stored (ackcheck.go): a strike, as the job's timing out would be, and
// no act in time.
func (r *rooms) unanswered(id, handle string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.entry(identityKey(id), now)
	if _, ok := rm.held[handle]; ok {
		r.strike(rm, handle, now)
	}
}

// withdrawn records that the job of stream sequence seq, if a worker
// holds it through this agent, was withdrawn by its coordinator at now:
// held an ack wait past it, whatever its progress reports, it is struck.
func (r *rooms) withdrawn(seq uint64, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range r.by {
		if h, ok := rm.seqs[seq]; ok {
			if d := rm.held[h]; d != nil && d.withdrawn.IsZero() {
				d.withdrawn = now
			}
		}
	}
}

// lost drops from id's book the jobs delivered to id on its pull named
// pull (never ""), but the handles kept, which its worker received; it
// returns the handles dropped, for the caller to hand back, and whether
// the book holds any job of that pull at all (with N agents, another
// agent may have served it). A job lost
// on its way is no strike, unless it was held over two thirds of its
// ack wait without word, as a hand-back so late is (done): else a
// sitter would sit, then call its jobs lost.
func (r *rooms) lost(id, pull string, kept []string, now time.Time) (gone []string, found bool) {
	if pull == "" {
		return nil, false
	}
	keep := make(map[string]bool, len(kept))
	for _, h := range kept {
		keep[h] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.entry(identityKey(id), now)
	for h, d := range rm.held {
		if d.id != id || d.pull != pull {
			continue
		}
		found = true
		if keep[h] {
			continue
		}
		gone = append(gone, h)
		if now.Sub(d.last) > d.wait*2/3 {
			r.strike(rm, h, now)
		} else {
			r.drop(rm, h)
		}
	}
	return gone, found
}

// delivered reports whether the book holds a job delivered to id on its
// pull named pull: whether this agent is the one to hand back the jobs
// of that pull.
func (r *rooms) delivered(id, pull string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.by[identityKey(id)]
	if rm == nil {
		return false
	}
	for _, d := range rm.held {
		if d.id == id && d.pull == pull {
			return true
		}
	}
	return false
}

// prune forgets the books of identities idle for idle (roomIdle for a
// tightened room) that hold and reserve nothing.
func (r *rooms) prune(idle time.Duration, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, rm := range r.by {
		r.size(rm, now) // expire what timed out
		wait := idle
		if rm.limit >= 0 {
			wait = roomIdle
		}
		if len(rm.held) == 0 && rm.reserved == 0 && now.Sub(rm.seen) > wait {
			delete(r.by, key)
		}
	}
}

// connectionCuts counts nc's cuts: two for each reconnection and one
// while it is down, so a count taken before a cut differs from any taken
// during or after it.
func connectionCuts(nc *nats.Conn) func() uint64 {
	return func() uint64 {
		n := 2 * nc.Stats().Reconnects
		if !nc.IsConnected() {
			n++
		}
		return n
	}
}
