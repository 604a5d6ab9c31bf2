package cluster

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/wait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"go.opentelemetry.io/otel/propagation"
)

// On a server with roles, a worker takes and acknowledges its jobs
// through the engine's agent, never on the route's consumer itself: the
// agent pulls for it and remembers which worker identity each delivery
// went to, and acts (ack, NAK, progress, terminate) only on a request of
// that identity. A worker's requests go on mdap.engine.work.<identity>.>,
// where the identity is its inbox (its key, and on the embedded server
// its connection), the only such subjects its permissions allow: so no
// worker can acknowledge, NAK or report progress on a job delivered to
// another, and a NAK can no longer steal a job (issue 35, attack 2).

// workSubject prefixes a worker's requests to the agent:
// workSubject<identity>.<op>, op one of workPull and workAck.
const (
	workSubject = agentSubject + "work."
	workPull    = "pull"
	workAck     = "ack"
)

// Headers of a job forwarded by the agent.
const (
	handleHeader    = "Mdap-Handle"    // the delivery's handle, for acks
	deliveredHeader = "Mdap-Delivered" // the delivery count
	publisherHeader = "Mdap-Publisher" // the identity the job was published under (jobPublisher)
	endHeader       = "Mdap-End"       // the last message of a pull's answer
)

// maxPull bounds the jobs of one pull through the agent.
const maxPull = 256

// maxPullWait bounds how long one pull through the agent waits for jobs.
const maxPullWait = time.Minute

// workerIdentity is the identity of a connection whose inbox prefix is
// inbox: the prefix without _INBOX_ (one token per key on a stock server,
// the key and the connection's random token on the embedded one).
func workerIdentity(inbox string) string { return strings.TrimPrefix(inbox, "_INBOX_") }

// pullRequest is a worker's pull through the agent; ackRequest an act on
// a delivery it holds.
type pullRequest struct {
	Route string        `json:"route"`
	N     int           `json:"n"`
	Wait  time.Duration `json:"wait"`
	// Skip: the coordinator identities whose jobs the worker would hand
	// back now (their replies fill its parking: parked.go), with the
	// delay; the agent hands them back itself, so a key's backlog costs
	// the worker no round trip a job, and for this worker only
	// (handoff.go). At most maxSkip.
	Skip map[string]time.Duration `json:"skip,omitempty"`
	// Places: the worker's Inflight, which its identity's room of held
	// jobs is sized by (heldroom.go); 0 (an older worker) counts maxPull.
	Places int `json:"places,omitempty"`
	// ID names the pull for its worker's lost act (at most maxPullID
	// bytes; "": an older worker, which names none).
	ID string `json:"id,omitempty"`
}

// maxPullID bounds a pull request's ID.
const maxPullID = 64

// maxSkip bounds a pull request's Skip.
const maxSkip = 256

type ackRequest struct {
	Handle string `json:"handle"`
	// Op: ack, nak, progress, term, gone (term if its Drawer has no
	// reply consumer), or lost: the pull Pull spanned the worker's
	// reconnection, and of its jobs only the handles Kept came (at most
	// maxPull); the rest are handed back at once, and are no strike
	// against its room (heldroom.go).
	Op     string   `json:"op"`
	Pull   string   `json:"pull,omitempty"`
	Kept   []string `json:"kept,omitempty"`
	Reason string   `json:"reason,omitempty"`
	// Delay: a NAK's redelivery delay (at most maxNakDelay), for this
	// worker only (handoff.go); an older agent ignores it and redelivers
	// at once.
	Delay time.Duration `json:"delay,omitempty"`
}

// held is a delivery the agent made for a worker identity.
type held struct {
	msg  jetstream.Msg
	id   string
	seq  uint64        // the job's stream sequence
	n    uint64        // its delivery count (JetStream's NumDelivered)
	wait time.Duration // its route's ack wait
	at   time.Time     // the delivery, or the last act on it
	// superseded: the job was delivered again since (deliveries.deliver,
	// or another agent's news): an act on this delivery reaches the book
	// only, never JetStream.
	superseded bool
}

// deliveries are the agent's deliveries awaiting their worker's ack.
type deliveries struct {
	mu   sync.Mutex
	held map[string]*held
	// last is the handle of each job's latest delivery, by stream
	// sequence: a redelivery supersedes the one before it (deliver).
	last map[uint64]string
}

// deliver records handle as the latest delivery of the job h, and
// supersedes an earlier delivery of it this agent still holds (the
// caller tells the other agents: Agent.tell). JetStream takes an act on
// an earlier delivery of a job still pending as one on the job, so a
// worker whose ack wait passed could hand back, or acknowledge, the
// delivery its next holder works on (review18: a stale NAK handed an
// honest worker's job back under it and struck its room). The caller
// holds d.mu.
func (d *deliveries) deliver(handle string, h *held) {
	d.supersede(h.seq, h.n)
	d.held[handle] = h
	if h.seq != 0 {
		if d.last == nil {
			d.last = map[uint64]string{}
		}
		d.last[h.seq] = handle
	}
}

// lapsed reports whether the delivery's ack wait passed since its
// worker's last word: JetStream delivers the job again, or has, perhaps
// through another agent whose news has not come yet (review19's test
// under CI's load), so a hand-back or termination of it now could reach
// only its next holder's delivery, and is booked as late, done nowhere.
// An acknowledgement is still done: the check stands for it (replyStored).
func (h *held) lapsed(now time.Time) bool { return h.wait > 0 && now.Sub(h.at) > h.wait }

// supersede marks the latest delivery this agent made of the job of
// stream sequence seq as superseded by its n-th delivery, if it came
// before (news from another agent may come after this agent delivered
// the job once more). The caller holds d.mu.
func (d *deliveries) supersede(seq, n uint64) {
	if o := d.held[d.last[seq]]; seq != 0 && o != nil && o.seq == seq && o.n < n {
		o.superseded = true
	}
}

// serveWork answers a worker's pull or act, relayed when another agent
// handed the pull on; the caller runs it on its own goroutine.
func (a *Agent) serveWork(ctx context.Context, js jetstream.JetStream, m *nats.Msg, relayed bool) {
	rest := strings.TrimPrefix(m.Subject, workSubject)
	dot := strings.LastIndexByte(rest, '.')
	if dot <= 0 {
		return
	}
	id, op := rest[:dot], rest[dot+1:]
	switch op {
	case workPull:
		a.pull(ctx, js, id, m, relayed)
	case workAck:
		var req ackRequest
		err := json.Unmarshal(m.Data, &req)
		if err == nil {
			err = a.act(id, req)
		}
		if errors.Is(err, errNoDelivery) {
			// Perhaps made by another agent of the engine.
			err = a.askPeers(ctx, id, req)
		}
		var resp agentResponse
		if err != nil {
			resp.Error = err.Error()
		}
		data, _ := json.Marshal(resp)
		_ = m.Respond(data)
	}
}

// endPull ends the answer to a pull on reply: the end marker, with its
// reason, then an empty message with no header, the end of a streamed
// answer to NATS, which then forgets the pull's way back across the
// accounts at once rather than agentPullWait later (accounts.go). A
// worker stops reading at the marker; the empty message reaches no one.
func endPull(nc *nats.Conn, reply, reason string) {
	msg := nats.NewMsg(reply)
	msg.Header.Set(endHeader, reason)
	_ = nc.PublishMsg(msg)
	_ = nc.Publish(reply, nil)
}

// pull fetches up to N jobs of the route for the worker id and sends each
// to the request's reply subject, then an end marker; or, not relayed,
// hands the pull on to another agent keeping jobs of the route that the
// worker may take (handoffpeers.go), which answers it.
func (a *Agent) pull(ctx context.Context, js jetstream.JetStream, id string, m *nats.Msg, relayed bool) {
	end := func(reason string) { endPull(a.nc, m.Reply, cmpOr(reason, "1")) }
	var req pullRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || req.Route == "" || req.N < 1 || req.N > maxPull || req.Wait <= 0 || req.Wait > maxPullWait || len(req.Skip) > maxSkip || len(req.ID) > maxPullID {
		end("bad pull request")
		return
	}
	a.pulls.saw(RouteToken(req.Route), identityKey(id))
	deadline := time.Now().Add(req.Wait)
	if !relayed && a.relayPull(ctx, id, m, req, deadline) {
		return
	}
	cons, err := js.Consumer(ctx, JobsStream, workerConsumer(RouteToken(req.Route)))
	if err != nil {
		end(err.Error())
		return
	}
	ccfg := cons.CachedInfo().Config
	ackWait := cmpOr(ccfg.AckWait, DefaultAckWait)
	// At most the identity's room left (heldroom.go), and none while it
	// keeps maxHandoffsPerKey jobs handed back (handoff.go); a pull with
	// none is answered with no job after up to a second, so that a
	// worker at its room asks again at an honest worker's pace.
	n := 0
	if !a.handoffs.atCap(identityKey(id)) {
		n = a.rooms.reserve(id, req.N, req.Places, time.Now())
	}
	defer func() { a.rooms.unreserve(id, n) }()
	if n == 0 {
		select {
		case <-ctx.Done():
		case <-time.After(min(req.Wait, pollWait)):
		}
		end("")
		return
	}
	// Fetch a second at a time within the request's wait, fitting the
	// pull to the room again each time (it shrinks when the identity's
	// jobs time out: a long pull must not keep what the room lost), and
	// again for the jobs handed back.
	given := 0
	for n > 0 {
		wait := min(time.Until(deadline), pollWait)
		if !relayed && given == 0 && a.peerKeeps.recent(RouteToken(req.Route), time.Now()) {
			// Fetch a little at a time: between fetches, the pull is
			// handed on to that agent (handoffpeers.go).
			wait = min(wait, relayCheckEvery)
		}
		if wait < 10*time.Millisecond {
			break
		}
		batch, err := cons.Fetch(n, jetstream.FetchMaxWait(wait))
		if err != nil {
			end(err.Error())
			return
		}
		seen, sent, more, full := a.forward(ctx, js, id, req, m.Reply, batch.Messages(), ccfg.MaxDeliver, ackWait, &n)
		if !more {
			end("the engine is stopping")
			return
		}
		if given += sent; !relayed && given == 0 && a.relayPull(ctx, id, m, req, deadline) {
			return
		}
		if full || seen > 0 && sent == 0 || a.handoffs.atCap(identityKey(id)) {
			// The room shrank, or every job was handed back: a job
			// handed back comes again within this pull only after its
			// delay, and each hand-back spends a delivery.
			break
		}
		n = a.rooms.refit(id, n, time.Now())
	}
	end("")
}

// forward sends the worker id, on reply, each job of msgs it may take,
// and each job another worker handed back with a delay that it may take
// (handoff.go), and hands back those of req.Skip's keys and those no
// worker should see; it returns how many jobs came and how many it sent, and false
// when ctx ended (the engine is stopping: a job fetched after that comes
// back after the ack wait).
//
// Each job sent takes one of the n places the pull reserved of id's room
// (n goes down by one); a job past the room, which shrank meanwhile
// (one of id's jobs timed out, perhaps this very one, redelivered), is
// handed back, as is every later one of msgs, and full is true.
func (a *Agent) forward(ctx context.Context, js jetstream.JetStream, id string, req pullRequest, reply string, msgs <-chan jetstream.Msg, maxDeliver int, ackWait time.Duration, n *int) (seen, sent int, more, full bool) {
	key, route := identityKey(id), RouteToken(req.Route)
	may := func(msg jetstream.Msg) bool {
		_, skipped := req.Skip[jobPublisher(msg.Subject())]
		md, err := msg.Metadata()
		return !skipped && err == nil && keeps(msg.Headers(), key, md.NumDelivered)
	}
	kept := closedChan // a job kept for another worker (handoff.go) may be waiting already
	for {
		var msg jetstream.Msg
		offered := kept
		if full || *n <= 0 {
			offered = nil
		}
		select {
		case <-ctx.Done():
			return seen, sent, false, full
		case m, ok := <-msgs:
			if !ok {
				return seen, sent, true, full
			}
			msg = m
		case <-offered:
			kept = a.handoffs.waiter(route)
			h := a.handoffs.take(route, key, time.Now(), may)
			if h == nil {
				continue
			}
			kept = closedChan // another may wait: try again while places are left
			// Its ack wait from now, as a job JetStream delivers.
			_ = h.msg.InProgress()
			msg = h.msg
		}
		seen++
		got := time.Now()
		var delivered, seq uint64
		if md, err := msg.Metadata(); err == nil {
			delivered, seq = md.NumDelivered, md.Sequence.Stream
		}
		if full {
			_ = msg.NakWithDelay(avoidDelay)
			continue
		}
		if *n <= 0 {
			// Kept jobs took the places this fetch was for: kept in
			// turn, every one of them, for any worker's next pull (this
			// one's too), so that none spends a delivery (review22). A
			// NAK of each after the first spent one each time, and a
			// worker pulling while others' hand-backs kept its places
			// full drove jobs to MaxDeliver: lost.
			_ = a.handBack(msg, seq, delivered, "", pollWait, ackWait)
			continue
		}
		// A job near its last delivery is forwarded whatever its key's
		// parking: a hand-back must not be what kills it.
		if d, ok := req.Skip[jobPublisher(msg.Subject())]; ok && (maxDeliver <= 0 || delivered+2 < uint64(maxDeliver)) {
			// Past its cap (its next pulls fetch nothing: atCap), this
			// fetch's jobs still come: kept for any other worker, so
			// that none is spent on it (review22).
			if d = min(max(d, avoidDelay), maxNakDelay); d <= avoidDelay || seq == 0 ||
				!a.keep(msg, seq, delivered, key, d, ackWait) && !a.keep(msg, seq, delivered, "", d, ackWait) {
				_ = msg.NakWithDelay(avoidDelay)
			}
			continue
		}
		// A job whose reply could not be stored takes no worker place.
		tok, ok := jobDrawer(msg.Data())
		owner, live, delay := "", ok, time.Duration(0)
		if ok {
			owner, live, delay = a.drawers.served(ctx, js, tok, got)
		}
		switch {
		case !live && delay > 0:
			_ = msg.NakWithDelay(delay)
			continue
		case !live:
			a.log.Debug("job terminated: no Drawer takes its replies", "reply_drawer", tok)
			_ = msg.TermWithReason("no Drawer takes its replies")
			continue
		case !drawerWrites(msg.Data()):
			a.log.Debug("job terminated: its id or lease is not of the form a Drawer writes", "reply_drawer", tok)
			_ = msg.TermWithReason("its id or lease is not of the form a Drawer writes")
			continue
		case owner != "" && owner != jobPublisher(msg.Subject()):
			a.log.Warn("job terminated: its replies go to another coordinator's Drawer", "reply_drawer", tok, "publisher", truncate(jobPublisher(msg.Subject()), 12))
			_ = msg.TermWithReason("its replies go to another coordinator's Drawer")
			continue
		}
		if !keeps(msg.Headers(), key, delivered) {
			// Its coordinator keeps this worker off the job (spreading a
			// step, or a quarantine): back to the queue for another.
			_ = msg.NakWithDelay(avoidDelay)
			continue
		}
		handle := deliveryHandle()
		if !a.rooms.hold(id, handle, req.ID, seq, ackWait, got) {
			_ = msg.NakWithDelay(avoidDelay)
			full = true
			continue
		}
		*n--
		a.work.mu.Lock()
		a.work.deliver(handle, &held{msg: msg, id: id, seq: seq, n: delivered, wait: ackWait, at: got})
		a.work.mu.Unlock()
		a.handoffs.supersede(seq, delivered)
		if delivered > 1 {
			a.tell(peerNews{Delivered: seq, Count: delivered})
		}
		out := nats.NewMsg(reply)
		forwardedHeaders(out.Header, msg.Headers())
		out.Header.Set(handleHeader, handle)
		out.Header.Set(deliveredHeader, strconv.FormatUint(delivered, 10))
		out.Header.Set(publisherHeader, jobPublisher(msg.Subject()))
		out.Data = msg.Data()
		// A job for a worker that went meanwhile comes back after the
		// ack wait, as one its worker died holding.
		_ = a.nc.PublishMsg(out)
		sent++
	}
}

// act does op on the delivery handle if the worker id holds it. An op
// it does not know is refused before the delivery is looked up, so the
// delivery stays held for the worker's next act.
func (a *Agent) act(id string, req ackRequest) error {
	switch req.Op {
	case "ack", "nak", "progress", "term", "gone", "lost":
	default:
		return fmt.Errorf("no such act %q: use ack, nak, progress, term, gone or lost", req.Op)
	}
	switch req.Op {
	case "gone":
		return a.termIfGone(id, req.Handle)
	case "lost":
		return a.handBackLost(id, req)
	}
	now := time.Now()
	a.work.mu.Lock()
	h, ok := a.work.held[req.Handle]
	superseded := ok && (h.superseded || req.Op != "ack" && req.Op != "progress" && h.lapsed(now))
	if ok && h.id == id {
		h.at = now
		if req.Op != "progress" || superseded {
			delete(a.work.held, req.Handle)
		}
	}
	a.work.mu.Unlock()
	if err := heldBy(h, ok, id); err != nil {
		return err
	}
	if superseded {
		// Late: the book takes it as a late act (a room at zero opens
		// to one job: rooms.late) or as the hold's time out, and the
		// job, delivered again since, is left to its next holder.
		a.rooms.done(id, req.Handle, false, now)
		return errSuperseded
	}
	switch {
	case req.Op == "progress":
		if a.rooms.progress(id, req.Handle, now) {
			return errJobWithdrawn
		}
	case req.Op == "ack" || req.Op == "term":
		// Checked and told to the job's Drawer (ackcheck.go): a job
		// still waiting there at the notice gets no reply, and fails at
		// once; one acknowledged with nothing stored under its reply id
		// is a strike, and ends here. No strike for a termination: an
		// honest worker terminates the jobs its coordinator withdrew.
		stored := a.replyStored(h.msg.Data(), id, req.Handle, req.Op == "ack")
		a.notify(h.msg.Data(), id, req.Op, !stored)
		if req.Op == "ack" && !stored {
			a.rooms.unanswered(id, req.Handle, now)
			_ = h.msg.TermWithReason("acknowledged by its worker with no reply stored")
			return errAckedUnanswered
		}
		a.rooms.done(id, req.Handle, req.Op == "ack", now)
	default: // "nak"
		a.rooms.done(id, req.Handle, false, now)
	}
	switch req.Op {
	case "ack":
		return h.msg.Ack()
	case "nak":
		if req.Delay > 0 {
			return a.handBack(h.msg, h.seq, h.n, identityKey(id), min(req.Delay, maxNakDelay), h.wait)
		}
		return h.msg.Nak()
	case "progress":
		return h.msg.InProgress()
	default: // "term"
		return h.msg.TermWithReason(cmpOr(req.Reason, "terminated by its worker"))
	}
}

// deliveryHandle names one delivery of a job to a worker: 128 random
// bits, since its reply's message id holds it (replyMsgID) and no other
// worker may guess it.
func deliveryHandle() string { return rand.Text() }

// handleOf is the delivery handle of a job delivered through the agent;
// "" for one delivered directly (a server without roles).
func handleOf(msg heldJob) string {
	if aj, ok := msg.(*agentJob); ok {
		return aj.handle
	}
	return ""
}

// heldBy says why the delivery h (found: ok) is not worker id's to act on.
func heldBy(h *held, ok bool, id string) error {
	switch {
	case !ok:
		return errNoDelivery
	case h.id != id:
		return errors.New("the job was delivered to another worker")
	}
	return nil
}

// handBackLost hands back at once the jobs of worker id's pull req.Pull
// that it did not receive (not in req.Kept), with no strike against its
// room (heldroom.go's lost): they were lost on the way while its
// connection was cut. errNoDelivery when this agent holds no job of that
// pull: the caller asks the other agents.
func (a *Agent) handBackLost(id string, req ackRequest) error {
	if req.Pull == "" || len(req.Kept) > maxPull {
		return fmt.Errorf("a lost act names its pull and at most %d handles it kept", maxPull)
	}
	gone, found := a.rooms.lost(id, req.Pull, req.Kept, time.Now())
	if !found {
		return errNoDelivery // another agent's pull, perhaps: asked of the peers
	}
	for _, handle := range gone {
		a.work.mu.Lock()
		h, ok := a.work.held[handle]
		ok = ok && h.id == id
		if ok {
			delete(a.work.held, handle)
			ok = !h.superseded && !h.lapsed(time.Now())
		}
		a.work.mu.Unlock()
		if ok {
			_ = h.msg.Nak()
		}
	}
	if len(gone) > 0 {
		a.log.Info("jobs lost on the way to their worker handed back", "worker", truncate(identityKey(id), 12), "jobs", len(gone))
	}
	return nil
}

// termIfGone terminates the delivery handle of worker id if its job's
// Drawer has no reply consumer on a look begun now, and otherwise
// refuses (errDrawerLive: the worker's reply tries again). A worker
// asks when its reply finds no stream: its Drawer closed while the
// model was called (then no reply could ever be stored), or a live
// Drawer's subject was dropped for a moment (the agents put it back).
func (a *Agent) termIfGone(id, handle string) error {
	a.work.mu.Lock()
	h, ok := a.work.held[handle]
	superseded := ok && (h.superseded || h.lapsed(time.Now()))
	if superseded && h.id == id {
		delete(a.work.held, handle)
	}
	a.work.mu.Unlock()
	if err := heldBy(h, ok, id); err != nil {
		return err
	}
	if superseded {
		return errSuperseded
	}
	tok, ok := jobDrawer(h.msg.Data())
	if ok {
		_, live, delay := a.drawers.served(context.Background(), a.js, tok, time.Now())
		if live {
			a.replies.missed()
		}
		if live || delay > 0 {
			return errDrawerLive
		}
	}
	a.work.mu.Lock()
	delete(a.work.held, handle)
	a.work.mu.Unlock()
	a.rooms.done(id, handle, false, time.Now())
	return h.msg.TermWithReason("its Drawer closed")
}

// forget drops deliveries without an act for longer than idle: the
// engine redelivered them long since.
func (a *Agent) forget(idle time.Duration) {
	now := time.Now()
	a.rooms.prune(idle, now)
	a.work.mu.Lock()
	defer a.work.mu.Unlock()
	for k, h := range a.work.held {
		if now.Sub(h.at) > idle {
			delete(a.work.held, k)
		}
	}
	for seq, handle := range a.work.last {
		if _, ok := a.work.held[handle]; !ok {
			delete(a.work.last, seq)
		}
	}
}

// agentJob is a job delivered through the agent, as the worker handles
// it: its acts are requests to the agent.
type agentJob struct {
	w         *Worker
	msg       *nats.Msg
	handle    string
	deliver   uint64
	publisher string // the identity its coordinator published it under, as the agent says
}

// publisherOf is the identity a held job was published under: as the
// agent says for one delivered through it, else its subject's last token
// (a server without roles: the name its client claims).
func publisherOf(msg heldJob) string {
	if aj, ok := msg.(*agentJob); ok {
		return aj.publisher
	}
	return jobPublisher(msg.Subject())
}

func (j *agentJob) Data() []byte         { return j.msg.Data }
func (j *agentJob) Headers() nats.Header { return j.msg.Header }
func (j *agentJob) Subject() string      { return "via the engine: " + j.handle }
func (j *agentJob) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{NumDelivered: j.deliver}, nil
}
func (j *agentJob) Ack() error                         { return j.act("ack", "", 0) }
func (j *agentJob) Nak() error                         { return j.act("nak", "", 0) }
func (j *agentJob) NakWithDelay(d time.Duration) error { return j.act("nak", "", d) }
func (j *agentJob) InProgress() error                  { return j.act("progress", "", 0) }
func (j *agentJob) Term() error                        { return j.act("term", "", 0) }
func (j *agentJob) TermWithReason(r string) error      { return j.act("term", r, 0) }

func (j *agentJob) act(op, reason string, delay time.Duration) error {
	data, _ := json.Marshal(ackRequest{Handle: j.handle, Op: op, Reason: reason, Delay: delay})
	// "No such delivery" to a second try of a gone act is no answer: the
	// first try may never have come (and the job expired meanwhile).
	if err := j.w.askAgent(data, op != "gone"); err != nil {
		return fmt.Errorf("%w: %s the job: %w", ErrEngine, op, err)
	}
	return nil
}

// actTry is how long one try of an act waits for the agent's answer: it
// answers at once, and an answer lost in a cut of the connection must not
// cost the whole publishTimeout (an acknowledgement lost so made its job
// wait out the ack wait, and struck its worker's room).
const actTry = 2 * time.Second

// cutLook is how often a pull under way looks for a cut of its worker's
// connection.
const cutLook = 250 * time.Millisecond

// askAgent sends the act data to the agent until it answers, within
// publishTimeout: again after a try's actTry and backoff (at once, when
// nats.go fails the request under way on a reconnection). With done, the
// agent's "no such delivery" to a try after the first means an earlier
// try's act was done (or the job expired), and is no error.
func (w *Worker) askAgent(data []byte, done bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	for try := 0; ; try++ {
		tctx, tcancel := context.WithTimeout(ctx, actTry)
		m, err := w.nc.RequestWithContext(tctx, w.workPrefix+workAck, data)
		tcancel()
		if err != nil {
			if ctx.Err() != nil || w.nc.IsClosed() || errors.Is(err, nats.ErrNoResponders) {
				return err
			}
			_ = wait.Sleep(ctx, backoff)
			continue
		}
		var resp agentResponse
		if err := json.Unmarshal(m.Data, &resp); err != nil {
			return fmt.Errorf("the engine's answer: %w", err)
		}
		switch {
		case resp.Error == "" || done && try > 0 && resp.Error == errNoDelivery.Error():
		case resp.Error == errDrawerLive.Error():
			return errDrawerLive
		case resp.Error == errJobWithdrawn.Error():
			return errJobWithdrawn
		default:
			return errors.New(resp.Error)
		}
		return nil
	}
}

// pullViaAgent takes up to n jobs through the agent, waiting at most wait
// for them, and hands each to take as it arrives: a job the agent has
// forwarded is drawn at once, not held until the pull ends (the rest of
// the n, or wait, up to a second, while a place sits free). It returns
// when the agent ends the pull, even after ctx ends (take then hands
// each job back); a timeout is no error.
func (w *Worker) pullViaAgent(ctx context.Context, n int, wait time.Duration, take func(heldJob)) error {
	inbox := w.nc.NewInbox()
	sub, err := w.nc.SubscribeSync(inbox)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrEngine, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	pull := nuid.Next()
	data, _ := json.Marshal(pullRequest{Route: w.route, N: n, Wait: wait, Skip: w.fullKeys(), Places: w.inflight, ID: pull})
	cuts := connectionCuts(w.nc)
	before := cuts()
	if err := w.nc.PublishRequest(w.workPrefix+workPull, inbox, data); err != nil {
		return fmt.Errorf("%w: %w", ErrEngine, err)
	}
	// Read to the pull's end even once ctx ends (the worker stopping):
	// the agent forwards the jobs it finds until then, and take hands
	// each back at once; unread, each would wait out the ack wait and
	// spend a delivery (review11: calls right after a worker stopped
	// took 10 s).
	// After a cut of the connection the end may be lost: then read only
	// until the agent's pull is over (its wait, and actTry for a slow
	// agent), so that the lost act hands the lost jobs back within
	// seconds, well within their ack wait.
	start := time.Now()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+agentTimeout)
	defer cancel()
	var kept []string
	ended := false
	defer func() {
		if cuts() != before || !ended && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			// Jobs sent while the connection was down are lost: the
			// agent hands them back now, rather than after the ack wait.
			w.lostPull(pull, kept)
		}
	}()
	for {
		tctx, tcancel := context.WithTimeout(rctx, cutLook)
		m, err := sub.NextMsgWithContext(tctx)
		tcancel()
		if errors.Is(err, context.DeadlineExceeded) && rctx.Err() == nil &&
			(cuts() == before || time.Since(start) < wait+actTry) {
			continue
		}
		if err != nil {
			if errors.Is(err, nats.ErrNoResponders) {
				err = errNoAgent
			}
			return err
		}
		if m.Header.Get("Status") == "503" {
			return errNoAgent
		}
		if reason := m.Header.Get(endHeader); reason != "" {
			ended = true
			if reason != "1" && !strings.Contains(reason, "timeout") && len(kept) == 0 {
				return fmt.Errorf("%w: pull through the engine: %s", ErrEngine, reason)
			}
			return nil
		}
		d, _ := strconv.ParseUint(m.Header.Get(deliveredHeader), 10, 64)
		kept = append(kept, m.Header.Get(handleHeader))
		take(&agentJob{w: w, msg: m, handle: m.Header.Get(handleHeader), deliver: d, publisher: m.Header.Get(publisherHeader)})
	}
}

// lostPull tells the agent that of the pull named pull only the jobs
// kept came; it hands back the rest. Best effort: a job it does not hear
// of comes back after its ack wait.
func (w *Worker) lostPull(pull string, kept []string) {
	data, _ := json.Marshal(ackRequest{Op: "lost", Pull: pull, Kept: kept})
	if err := w.askAgent(data, true); err != nil {
		w.log.Debug("telling the engine of a pull cut short", "err", err)
	}
}

// forwardedHeaders copies to out the headers of a job its worker may
// use: its W3C trace context and baggage (traceHeaders) only. The rest
// are its coordinator's to choose, and the agent's own (Mdap-End ends a
// pull's answer, Status a pull or the agent itself) would have a run
// key's job end other runs' pulls: review11's run key so held another
// run's jobs in a pull nobody read for the ack wait, 21 s for a run of
// one second. The list is fixed, not this process's propagator: the
// engine's process (maker nats) sets none, and copied nothing (CI30).
func forwardedHeaders(out, job nats.Header) {
	for _, k := range traceHeaders {
		for _, name := range []string{k, textproto.CanonicalMIMEHeaderKey(k)} {
			if v, ok := job[name]; ok {
				out[name] = v
			}
		}
	}
}

// traceHeaders are the fields of the W3C trace-context and baggage
// propagators, which coordinators and workers use (observe.Propagator).
var traceHeaders = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}).Fields()
