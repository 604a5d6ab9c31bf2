package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mdap-go/mdap/internal/wait"
)

// A worker acknowledges a job delivered through the agent once its reply
// is stored (Worker.publishReply, then the ack). The agent checks that it
// was: it publishes a stand-in reply (unansweredReply) on the worker's
// own reply subject for the job, under its reply's message id (the job's
// lease and the delivery's handle: replyMsgID).
// RepliesStream drops it as a duplicate when the worker's reply with that
// id was stored within the stream's Duplicates window (2 minutes), and
// stores it otherwise: then the job's Drawer fails the job's samples at
// once naming the worker (ErrUndecodable, DrawerStats.Bad), the job is
// terminated rather than acknowledged, and the act is a strike against
// the identity's room, as a job timing out is (heldroom.go). Before, a
// worker credential acknowledging every job it took without answering
// kept its whole room, and each of those samples waited out its run's
// --timeout.
//
// Only a worker the job was delivered to knows its lease, so only what
// such a worker stored (or the stand-in) is under it; what it stored
// there need not be the job's reply, and the duplicate table does not
// say where: the Drawer fails a job at once on anything under its reply
// id on its own reply subjects that is not its reply, and quarantines
// the sender (Drawer.onReply). Something stored under the id on another
// Drawer's subjects, or a stand-in refused because the worker's own
// messages fill its place at the Drawer, fails nothing by itself: the
// notice of every act (notify) does, on a subject no worker writes
// (review15). A termination gets the stand-in too, with no strike. The
// check and the notice cost two JetStream publications an act. Where the engine cannot say (the
// stream takes no reply for the job's Drawer any more, a timeout, a
// cluster electing its leaders), the ack stands as it did before the
// check. A stream leader restarted within the window (a memory stream
// rebuilt from its peers) knows only the message ids of the replies
// still stored, so an honest worker's ack of a reply its Drawer had
// already taken may be struck then, once: its next ack doubles its room
// back, and the stand-in reaches no waiting call.

// errAckedUnanswered answers a worker's ack of a job whose reply the
// engine never stored.
var errAckedUnanswered = errors.New("no reply of this worker to the job is stored: a job is acknowledged after its reply is published")

// ackCheckTimeout bounds the check of one acknowledgement: past it the
// ack stands unchecked. Under actTry, so the worker hears the answer
// before it sends its act again.
const ackCheckTimeout = time.Second

// unansweredReply is the stand-in reply the agent stores for a job its
// worker acknowledged without a stored reply. It bears the job's id and
// lease, so its Drawer fails the job's samples at once (onReply), and
// does not decode as a Reply (no version, no samples).
type unansweredReply struct {
	ID         string `json:"id"`
	Lease      string `json:"lease"`
	Worker     string `json:"worker"`
	Unanswered bool   `json:"unanswered"`
	// Acked: the worker acknowledged the job (else it terminated it,
	// which an honest worker does with a job it cannot decode).
	Acked bool `json:"acked,omitempty"`
}

// actedJob is what the agent reads of a job a worker acted on.
type actedJob struct {
	ID      string `json:"id"`
	ReplyTo string `json:"reply_to"`
	Lease   string `json:"lease"`
}

// actedOn reads the job data; false for one the agent would not deliver
// (nothing to check, nobody to tell).
func actedOn(data []byte) (actedJob, bool) {
	var job actedJob
	ok := json.Unmarshal(data, &job) == nil && isJobReplyTo(job.ReplyTo) && job.drawerWrote()
	return job, ok
}

// drawerWrote reports whether the job's id and lease are of the forms a
// Drawer writes (a NUID, leaseKey's 32 hex digits): the agent copies both
// into the stand-in and the notice it stores with the engine's rights, so
// a coordinator's job must not choose their size (review18: leases of
// 250 KiB had each honest worker's terminations fill the reply stream
// for the coordinator). The agent delivers no other job (forward).
func (j actedJob) drawerWrote() bool {
	if len(j.ID) == 0 || len(j.ID) > maxJobID || len(j.Lease) != 32 {
		return false
	}
	for _, c := range j.ID {
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	for _, c := range j.Lease {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// drawerWrites reports whether the job data's id and lease are of the
// forms a Drawer writes (actedJob.drawerWrote).
func drawerWrites(data []byte) bool {
	var job actedJob
	return json.Unmarshal(data, &job) == nil && job.drawerWrote()
}

// maxJobID bounds the id of a job the agent delivers (a Drawer's are
// NUIDs, 22 characters).
const maxJobID = 64

// noticeMark begins the last token of the subject the agent tells a
// job's Drawer of its worker's act on: mdap.replies.<token>.<job>.~<key>,
// stored as mdap.replies.<token>.w.~<key>. A worker publishes only on
// subjects ending in its own key (ReplyPermission), so none can forge a
// notice or fill the place the notices have (review15: a worker storing
// something under a job's reply id on another Drawer's subject, or
// keeping its own place at the Drawer full, made the stand-in fail
// nothing).
const noticeMark = "~"

// actNotice tells a job's Drawer that its worker acknowledged or
// terminated the job. A reply the worker stored before the act is
// stored before the notice, and a Drawer reads its replies in the
// stream's order: a job still waiting when its notice comes gets no
// reply, and its calls fail at once (Drawer.onNotice).
type actNotice struct {
	ID    string `json:"id"`
	Lease string `json:"lease"`
	Act   string `json:"act"` // "ack" or "term"
	// Unanswered: the engine held nothing under the job's reply id at
	// the act (replyStored).
	Unanswered bool `json:"unanswered,omitempty"`
}

// notify stores the notice of worker id's act on the job data, trying
// again while the notices of the worker at the Drawer fill their place,
// within ackCheckTimeout. With no message id: one the worker could know
// (its handle's) it could take first, anywhere in the stream, and the
// notice would be dropped as a duplicate (review17); it is tried again
// only when it was not stored, and a second notice of one act finds
// nothing waiting.
func (a *Agent) notify(data []byte, id, act string, unanswered bool) {
	job, ok := actedOn(data)
	if !ok {
		return
	}
	body, _ := json.Marshal(actNotice{ID: job.ID, Lease: job.Lease, Act: act, Unanswered: unanswered})
	ctx, cancel := context.WithTimeout(a.ctx, ackCheckTimeout)
	defer cancel()
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		_, err := a.js.PublishMsg(ctx, &nats.Msg{Subject: replySubject(job.ReplyTo, noticeMark+identityKey(id)), Data: body},
			jetstream.WithExpectStream(RepliesStream))
		if err == nil || !strings.Contains(err.Error(), "maximum messages per subject exceeded") || wait.Sleep(ctx, pause) != nil {
			if err != nil {
				a.log.Debug("a worker's act not told to its Drawer", "job", job.ID, "act", act, "err", err)
			}
			return
		}
	}
}

// replyStored reports whether the worker of identity id stored a reply
// to the job data, delivered to it as handle, before acknowledging it;
// when it did not, the stand-in is stored in its place. True when the
// engine cannot say.
func (a *Agent) replyStored(data []byte, id, handle string, acked bool) bool {
	job, ok := actedOn(data)
	if !ok {
		return true // a job the agent would not deliver: nothing to check
	}
	voter := identityKey(id)
	stand, _ := json.Marshal(unansweredReply{ID: job.ID, Lease: job.Lease, Worker: voter, Unanswered: true, Acked: acked})
	ctx, cancel := context.WithTimeout(a.ctx, ackCheckTimeout)
	defer cancel()
	ack, err := a.js.PublishMsg(ctx, &nats.Msg{Subject: replySubject(job.ReplyTo, voter), Data: stand},
		jetstream.WithMsgID(replyMsgID(job.Lease, job.ID, handle)), jetstream.WithExpectStream(RepliesStream))
	switch {
	case err == nil:
		return ack.Duplicate
	case strings.Contains(err.Error(), "maximum messages per subject exceeded"):
		// The worker's own replies fill its place for the Drawer (the
		// stand-in is not stored either); its reply to this job, had it
		// been stored, would have been a duplicate before any limit was
		// looked at.
		return false
	}
	a.log.Debug("an act stands unchecked: the stand-in was not published", "job", job.ID, "err", err)
	return true
}

// isJobReplyTo reports whether s is a job's reply subject as a Drawer
// writes it, mdap.replies.<token>.<job>: the only subjects the agent
// publishes a stand-in under (a job's fields are its coordinator's to
// choose).
func isJobReplyTo(s string) bool {
	rest, ok := strings.CutPrefix(s, repliesSubject)
	tok, job, dotted := strings.Cut(rest, ".")
	return ok && dotted && isReplyToken(tok) && job != "" && !strings.ContainsAny(job, ".*> \t\r\n")
}
