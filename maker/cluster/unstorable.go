package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Jobs whose replies cannot be stored. A job's reply subject (Job.ReplyTo)
// is its coordinator's to write, so a coordinator credential can queue
// well-formed jobs whose replies the engine will not take: to a Drawer
// token of its own invention (no stream takes the subject), or to its
// own Drawer, which it never reads (this worker's room there,
// ProvisionConfig.ReplyKeep replies, stays full). A worker tries such a
// reply again (a live Drawer's subject may be briefly dropped, and an
// honest Drawer takes its replies within milliseconds). Three defences
// keep such a job from holding a worker place:
//
//   - the agent hands a worker only jobs whose Drawer the engine serves
//     for the job's own coordinator: one whose reply subject is not a
//     Drawer's (jobDrawer), whose token names no reply consumer on a
//     look begun after the agent received the job (drawerCache), or
//     whose Drawer was asked for by another identity than the one that
//     published the job (its replies would fill that coordinator's room
//     and make it look not reading), is terminated before any worker
//     sees it. The consumers, not the stream's subjects, are the
//     truth: a concurrent write may drop a live Drawer's subject for a
//     moment (replySpace), never its consumer.
//   - a reply waiting for room holds no place (parked.go), and a key
//     whose parked replies fill its parking has its jobs handed back
//     before their model call;
//   - a worker whose reply still finds its room full after roomWait,
//     while none of its replies to that Drawer found room in the last
//     roomWait (an honest Drawer under a burst keeps taking them, only
//     not as fast as they come), hands the job back and remembers the
//     Drawer as not reading for notReadingFor: it hands back that
//     Drawer's jobs at once, before the model call, with a delay
//     (notReading). An honest Drawer that was slow only loses that
//     delay; its jobs come back.

// The agent's looks at the live Drawers.
const (
	// drawerLookEvery is the least time between two looks at the reply
	// consumers made for a job whose Drawer the last look did not have:
	// a job received after that look waits at most this long (handed
	// back with a delay), so a flood of such jobs costs the engine four
	// looks a second.
	drawerLookEvery = 250 * time.Millisecond
	// drawerFresh is the age past which a look is taken again even for a
	// Drawer it has: a Drawer closed since is seen within a second.
	drawerFresh = time.Second
)

// The worker's memory of Drawers not reading their replies.
const (
	// roomWait is how long a worker's reply waits for room at its Drawer
	// (its earlier replies not taken yet) before its job is handed back,
	// unless another of this worker's replies to that Drawer found room
	// in the last roomWait: an honest Drawer takes a reply within
	// milliseconds, but one reply may wait for the worker's others to the
	// same Drawer (ReplyKeep of them at a time), under a burst and on a
	// loaded machine for seconds, while others of them find room. (A
	// pace of several replies per roomWait took an honest Drawer whose
	// subject was being dropped, its consumer delivering nothing
	// meanwhile, for not reading; a trickle holds no place in any case:
	// parked.go.)
	roomWait = 2 * time.Second
	// notReadingFor is how long a worker hands back, before the model
	// call, the jobs of a Drawer whose room stayed full for roomWait.
	notReadingFor = 10 * time.Second
)

// maxNakDelay bounds the delay of a NAK a worker asks of the agent.
const maxNakDelay = time.Minute

// errNoRoom: a reply found its room at its Drawer full for roomWait.
var errNoRoom = errors.New("the coordinator has not taken this worker's earlier replies")

// errTooLarge: a reply is larger than the engine stores
// (ProvisionConfig.ReplyBytes, or the server's largest message).
var errTooLarge = errors.New("reply too large")

// errDrawerLive: the agent's answer to a worker's gone act whose Drawer
// still has its reply consumer (or may: a look is not due yet).
var errDrawerLive = errors.New("its Drawer is live")

// errJobWithdrawn: the agent's answer to a progress report on a job its
// coordinator withdrew; the worker drops the job (heldroom.go).
var errJobWithdrawn = errors.New("the job was withdrawn by its coordinator")

// errDrawerGone: a reply found no stream and the agent found no reply
// consumer for its Drawer: it closed, and the agent terminated the job.
var errDrawerGone = errors.New("its Drawer closed while the model was called; the job is terminated")

// goneEvery is how often a reply that finds no stream asks the agent
// whether its Drawer is gone (a look at most four times a second, up to
// drawerFresh old), so a Drawer closed mid-call costs its worker's place
// about a second, not noStreamWait.
const goneEvery = 250 * time.Millisecond

// drawerCache is an agent's last look at RepliesStream's reply
// consumers: the tokens of the Drawers the engine serves.
type drawerCache struct {
	mu   sync.Mutex
	at   time.Time         // when the last look began
	live map[string]string // replyToken of every reply consumer then: the identity that asked for it ("" for none)
}

// served reports whether the Drawer of token tok has a reply consumer,
// for a job the agent received at got, and the identity that asked for
// it ("" for none: a server without roles, or a consumer nobody has
// adopted): ok, or a delay to hand the job back for (the last look
// began before the job came, and the next may not be taken yet), or
// neither (no such Drawer: a look begun after the job came, so after
// its Drawer's consumer was made, did not find it). A look that fails
// counts the Drawer as served by no one in particular: the worker's
// reply finds out.
func (c *drawerCache) served(ctx context.Context, js jetstream.JetStream, tok string, got time.Time) (owner string, ok bool, delay time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	since := time.Since(c.at)
	if _, known := c.live[tok]; since >= drawerFresh || !known && c.at.Before(got) && since >= drawerLookEvery {
		began := time.Now()
		lctx, cancel := context.WithTimeout(ctx, agentTimeout)
		defer cancel()
		live, err := drawerOwners(lctx, js)
		if err != nil {
			return "", true, 0
		}
		c.at, c.live = began, live
	}
	if owner, known := c.live[tok]; known {
		return owner, true, 0
	}
	if c.at.After(got) {
		return "", false, 0
	}
	return "", false, max(drawerLookEvery-time.Since(c.at), avoidDelay)
}

// drawerOwners is the Drawer token of every reply consumer on
// RepliesStream, with the identity that asked for it.
func drawerOwners(ctx context.Context, js jetstream.JetStream) (map[string]string, error) {
	st, err := js.Stream(ctx, RepliesStream)
	if err != nil {
		return nil, err
	}
	live := map[string]string{}
	cl := st.ListConsumers(ctx)
	for ci := range cl.Info() {
		if isDrawerID(ci.Name) {
			live[replyToken(ci.Name)] = ci.Config.Metadata[addedByKey]
		}
	}
	return live, cl.Err()
}

// jobPublisher is the identity a job was published under: the last
// token of its subject (mdap.jobs.<route>.<key>), which a coordinator's
// permissions fix to its own key.
func jobPublisher(subject string) string {
	return subject[strings.LastIndexByte(subject, '.')+1:]
}

// jobDrawer is the Drawer token of a job's reply subject, and false for
// a job that names none (no worker could answer it: decodeJob).
func jobDrawer(data []byte) (string, bool) {
	var job struct {
		ReplyTo string `json:"reply_to"`
	}
	if json.Unmarshal(data, &job) != nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(job.ReplyTo, repliesSubject)
	tok, _, dotted := strings.Cut(rest, ".")
	return tok, ok && dotted && isReplyToken(tok)
}

// notReading is how long the jobs of the Drawer tok are still handed
// back before their model call (0: not at all).
func (w *Worker) notReading(tok string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Until(w.stalled[tok])
}

// stall remembers the Drawer tok as not reading for notReadingFor.
func (w *Worker) stall(tok string) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, until := range w.stalled {
		if now.After(until) {
			delete(w.stalled, k)
		}
	}
	w.stalled[tok] = now.Add(notReadingFor)
}

// replyDrawer is the Drawer token of a decoded job's reply subject.
func replyDrawer(job Job) string {
	tok, _, _ := strings.Cut(strings.TrimPrefix(job.ReplyTo, repliesSubject), ".")
	return tok
}

// roomTaken notes that a reply of this worker to the Drawer tok found
// room.
func (w *Worker) roomTaken(tok string) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if last, ok := w.taken[tok]; !ok || now.Sub(last) > roomWait {
		// Only when the entry is new or stale, so the sweep is rare.
		for k, at := range w.taken {
			if now.Sub(at) > notReadingFor {
				delete(w.taken, k)
			}
		}
	}
	w.taken[tok] = now
}

// reading reports whether a reply of this worker to the Drawer tok
// found room in the last roomWait.
func (w *Worker) reading(tok string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.taken[tok]
	return ok && time.Since(last) <= roomWait
}
