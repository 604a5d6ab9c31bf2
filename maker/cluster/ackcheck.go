package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A worker acknowledges a job delivered through the agent once its reply
// is stored (Worker.publishReply, then the ack). The agent checks that it
// was: it publishes a stand-in reply (unansweredReply) on the worker's
// own reply subject for the job, under the job's lease as its message id.
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
// the sender (Drawer.onReply), but something stored under the id on
// another Drawer's subjects, or a stand-in refused because the worker's
// own messages fill its place at the Drawer, fails nothing, and the
// job's samples wait out their timeout (review15; docs/nats.md, not
// covered). A termination gets the stand-in too, with no strike. The
// check costs one JetStream publication an act. Where the engine cannot say (the
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

// replyStored reports whether the worker of identity id stored a reply
// to the job data before acknowledging it; when it did not, the stand-in
// is stored in its place. True when the engine cannot say.
func (a *Agent) replyStored(data []byte, id string, acked bool) bool {
	var job struct {
		ID      string `json:"id"`
		ReplyTo string `json:"reply_to"`
		Lease   string `json:"lease"`
	}
	if json.Unmarshal(data, &job) != nil || job.ID == "" || !isJobReplyTo(job.ReplyTo) {
		return true // a job the agent would not deliver: nothing to check
	}
	voter := identityKey(id)
	stand, _ := json.Marshal(unansweredReply{ID: job.ID, Lease: job.Lease, Worker: voter, Unanswered: true, Acked: acked})
	ctx, cancel := context.WithTimeout(a.ctx, ackCheckTimeout)
	defer cancel()
	ack, err := a.js.PublishMsg(ctx, &nats.Msg{Subject: replySubject(job.ReplyTo, voter), Data: stand},
		jetstream.WithMsgID(cmpOr(job.Lease, job.ID)), jetstream.WithExpectStream(RepliesStream))
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
