package cluster

import (
	"context"
	"slices"
	"time"
)

// Replies waiting for room hold no worker place. A worker's place (one
// of its Inflight jobs) is for a model call: once a job's calls end, its
// place is free for the next job, and its reply waits for room at its
// Drawer (ProvisionConfig.ReplyKeep of this worker's replies at a time)
// apart, parked. So a Drawer that reads slowly, by load, by distance or
// by design (a run key reading one reply a second to keep the worker
// waiting), delays its own replies and never another run's jobs. Parked
// replies are bounded per coordinator identity (the key a job was
// published under, which the engine's agent tells the worker): a job
// whose key has parkRoom replies parked already is handed back before
// its model call, for four times as long as the key's oldest parked
// reply has waited (within parkBackMin and parkBackMax: an honest Drawer
// slowed by load loses little, and a key's backlog of jobs, up to
// ProvisionConfig.KeyJobs, handed back again and again costs a worker of
// one place a small share of its pulls), so a coordinator's unread
// replies cost a worker memory and goroutines up to a bound and no model
// call; a Drawer that takes none of them for roomWait is not reading
// (unstorable.go).
const (
	// parkFloor is the least of parkRoom: a worker of few places still
	// lets a key have this many replies parked, so an honest run's next
	// job is not handed back while its last reply is being stored.
	parkFloor = 4
	// parkBackMin and parkBackMax bound how long a job of a key whose
	// replies fill its parking is handed back for.
	parkBackMin = 250 * time.Millisecond
	parkBackMax = 30 * time.Second
	// parkMax bounds how long a reply waits for room while its Drawer
	// reads (the job is kept in progress meanwhile); its coordinator's
	// timeout withdraws it sooner.
	parkMax = time.Minute
	// lineWidth is how many of this worker's replies to one Drawer ask
	// for room at once: its room's worth (ReplyKeep's default).
	lineWidth = 4
)

// parkRoom is how many replies one key may have parked before its jobs
// are handed back.
func (w *Worker) parkRoom() int { return max(w.inflight, parkFloor) }

// parkedFull is how long a job of key is handed back before its model
// call because of the key's parked replies (0: take it): as many as
// parkRoom, or every key's together at four parkRooms while key has one.
func (w *Worker) parkedFull(key string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fullFor(key)
}

// fullFor is parkedFull, w.mu held.
func (w *Worker) fullFor(key string) time.Duration {
	since := w.parked[key]
	if n := len(since); n < w.parkRoom() && (n == 0 || w.parkedN < 4*w.parkRoom()) {
		return 0
	}
	return min(max(4*time.Since(slices.MinFunc(since, time.Time.Compare)), parkBackMin), parkBackMax)
}

// fullKeys is every key whose jobs parkedFull hands back now, with the
// delay, at most maxSkip of them (for the agent to hand back itself).
func (w *Worker) fullKeys() map[string]time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var keys map[string]time.Duration
	for key := range w.parked {
		if d := w.fullFor(key); d > 0 && len(keys) < maxSkip {
			if keys == nil {
				keys = map[string]time.Duration{}
			}
			keys[key] = d
		}
	}
	return keys
}

// park counts a reply of key waiting (for its turn, room or a stream)
// since at; unpark its end (stored, or given up).
func (w *Worker) park(key string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parked[key] = append(w.parked[key], at)
	w.parkedN++
}

func (w *Worker) unpark(key string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parkedN--
	since := w.parked[key]
	since = slices.Delete(since, slices.Index(since, at), slices.Index(since, at)+1)
	if len(since) == 0 {
		delete(w.parked, key)
		return
	}
	w.parked[key] = since
}

// replyLine is the order in which this worker's replies to one Drawer
// ask for their room: lineWidth at a time, the others waiting in the
// order they came (blocked channel receives are served first come, first
// served), so under a burst no reply loses its turn for seconds to later
// ones, and the room is asked for by a few replies, not hundreds.
type replyLine struct {
	turns chan struct{} // the turns no reply holds
	using int           // replies holding or waiting for a turn
}

// queue waits for a turn of this worker's replies to the Drawer tok,
// calling wait first if it must, and returns the function that passes
// it on; an error when ctx ends first.
func (w *Worker) queue(ctx context.Context, tok string, wait func()) (done func(), err error) {
	w.mu.Lock()
	l, ok := w.lines[tok]
	if !ok {
		l = &replyLine{turns: make(chan struct{}, lineWidth)}
		for range lineWidth {
			l.turns <- struct{}{}
		}
		w.lines[tok] = l
	}
	l.using++
	w.mu.Unlock()
	leave := func(held bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if held {
			l.turns <- struct{}{}
		}
		if l.using--; l.using == 0 {
			delete(w.lines, tok)
		}
	}
	select {
	case <-l.turns:
		return func() { leave(true) }, nil
	default:
	}
	wait()
	select {
	case <-l.turns:
		return func() { leave(true) }, nil
	case <-ctx.Done():
		leave(false)
		return nil, ctx.Err()
	}
}
