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
// honest Drawer takes its replies within milliseconds), so each delivery
// would hold one of its places for seconds, up to MaxDeliver times, and
// other runs' jobs would queue behind. Two defences keep such a job from
// holding a worker place:
//
//   - the agent hands a worker only jobs whose Drawer the engine serves:
//     one whose reply subject is not a Drawer's (jobDrawer), or whose
//     token names no reply consumer on a look begun after the agent
//     received the job (drawerCache), is terminated before any worker
//     sees it. The consumers, not the stream's subjects, are the
//     truth: a concurrent write may drop a live Drawer's subject for a
//     moment (replySpace), never its consumer.
//   - a worker whose reply still finds its room full after roomWait
//     hands the job back and remembers the Drawer as not reading for
//     notReadingFor: it hands back that Drawer's jobs at once, before the
//     model call, with a delay (notReading). An honest Drawer that was
//     slow only loses that delay; its jobs come back.

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
	// (its earlier replies not taken yet) before its job is handed back:
	// an honest Drawer takes a reply within milliseconds, but one reply
	// may wait for the worker's others to the same Drawer (ReplyKeep of
	// them at a time), on a loaded machine for over a second.
	roomWait = 2 * time.Second
	// notReadingFor is how long a worker hands back, before the model
	// call, the jobs of a Drawer whose room stayed full for roomWait.
	notReadingFor = 10 * time.Second
)

// maxNakDelay bounds the delay of a NAK a worker asks of the agent.
const maxNakDelay = time.Minute

// errNoRoom: a reply found its room at its Drawer full for roomWait.
var errNoRoom = errors.New("the coordinator has not taken this worker's earlier replies")

// drawerCache is an agent's last look at RepliesStream's reply
// consumers: the tokens of the Drawers the engine serves.
type drawerCache struct {
	mu   sync.Mutex
	at   time.Time       // when the last look began
	live map[string]bool // replyToken of every reply consumer then
}

// served reports whether the Drawer of token tok has a reply consumer,
// for a job the agent received at got: ok, or a delay to hand the job
// back for (the last look began before the job came, and the next may
// not be taken yet), or neither (no such Drawer: a look begun after the
// job came, so after its Drawer's consumer was made, did not find it).
// A look that fails counts the Drawer as served: the worker's reply
// finds out.
func (c *drawerCache) served(ctx context.Context, js jetstream.JetStream, tok string, got time.Time) (bool, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	since := time.Since(c.at)
	if since >= drawerFresh || !c.live[tok] && c.at.Before(got) && since >= drawerLookEvery {
		began := time.Now()
		lctx, cancel := context.WithTimeout(ctx, agentTimeout)
		defer cancel()
		st, err := js.Stream(lctx, RepliesStream)
		var live map[string]bool
		if err == nil {
			live, err = liveDrawers(lctx, st)
		}
		if err != nil {
			return true, 0
		}
		c.at, c.live = began, live
	}
	switch {
	case c.live[tok]:
		return true, 0
	case c.at.After(got):
		return false, 0
	}
	return false, max(drawerLookEvery-time.Since(c.at), avoidDelay)
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
