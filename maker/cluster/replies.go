package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The reply space of each Drawer. RepliesStream takes replies only on the
// subjects of the Drawers the engine made a reply consumer for
// (mdap.replies.<drawer>.*.*), and stores each under its Drawer and its
// worker's identity (mdap.replies.<drawer>.w.<worker>), at most
// ProvisionConfig.ReplyKeep of them (the bound in force, replyBound) a
// subject, refusing a new one past it or past the stream's bytes. A worker
// publishes replies only under its own identity (ReplyPermission), and
// cannot make up a Drawer (no stream takes the subject), so what one
// worker can store is replyBound replies for each of at most MaxDrawers
// Drawers: within half of the stream. A flood fills the flooder's own
// subjects, refused past them; an honest worker's reply is stored and
// delivered, never dropped to make room. A stream full all the same (two
// flooding identities, each its half) refuses new replies, and a sample
// awaiting one fails naming it (Drawer.repliesFull) instead of waiting out
// its timeout.

// noDrawer is the subject RepliesStream takes when the engine serves no
// Drawer yet (a stream needs one): a Drawer's id starts with d, and no
// worker may publish on it (a reply subject has three tokens more).
const noDrawer = repliesSubject + "_"

// DefaultMaxDrawers is the most Drawers the engine takes replies for at
// once when ProvisionConfig.MaxDrawers is 0: a coordinator process has
// one (a batch's coordinators one each).
const DefaultMaxDrawers = 32

// maxDrawers is the largest ProvisionConfig.MaxDrawers.
const maxDrawers = 4096

// drawerReplies is the subject of RepliesStream that takes the replies
// to the Drawer id: its jobs' reply subjects with a worker's identity.
func drawerReplies(id string) string { return repliesSubject + id + ".*.*" }

// isDrawerID reports whether id can name a Drawer: d and up to 63 letters
// or digits (a NUID), so it is one token of a subject and a consumer name.
func isDrawerID(id string) bool {
	return strings.HasPrefix(id, "d") && nameRE.MatchString(id) && !strings.ContainsAny(id, "-_")
}

// drawerOf is the Drawer whose replies RepliesStream subject subj takes,
// and false for another subject.
func drawerOf(subj string) (string, bool) {
	id, ok := strings.CutPrefix(subj, repliesSubject)
	if !ok {
		return "", false
	}
	id, ok = strings.CutSuffix(id, ".*.*")
	return id, ok && isDrawerID(id)
}

// repliesMu serializes this process's changes of RepliesStream's subjects
// (each a read, then an update): a Drawer's addition and Provision.
var repliesMu sync.Mutex

// provisionedRepliesConfig is RepliesStream as the engine provisions it:
// with cfg's bounds, on the subjects of the Drawers whose reply consumer
// exists, so that a reply to a Drawer the engine never made is refused
// (no stream takes it).
func provisionedRepliesConfig(ctx context.Context, js jetstream.JetStream, cfg ProvisionConfig) (jetstream.StreamConfig, error) {
	want := repliesStreamConfig(cfg.Replicas)
	want.MaxBytes = cfg.sampleBytes()
	want.MaxMsgSize = cfg.replyBytes()
	want.MaxMsgsPerSubject = cfg.replyBound()
	subjects := []string{noDrawer}
	st, err := js.Stream(ctx, RepliesStream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
	case err != nil:
		return want, provisionErr("stream "+RepliesStream, cfg.Replicas, err)
	default:
		inUse, err := drawersInUse(ctx, st)
		if err != nil {
			return want, provisionErr("the Drawers of "+RepliesStream, cfg.Replicas, err)
		}
		for id := range inUse {
			subjects = append(subjects, drawerReplies(id))
		}
	}
	slices.Sort(subjects)
	want.Subjects = subjects
	return want, nil
}

// drawersInUse is the Drawers of reply stream st that have their reply
// consumer.
func drawersInUse(ctx context.Context, st jetstream.Stream) (map[string]bool, error) {
	inUse := map[string]bool{}
	cl := st.ConsumerNames(ctx)
	for name := range cl.Name() {
		if isDrawerID(name) {
			inUse[name] = true
		}
	}
	return inUse, cl.Err()
}

// serveDrawer makes RepliesStream take the replies to the Drawer id, and
// its reply consumer, while the engine takes replies for fewer than
// cfg.MaxDrawers Drawers: the subjects of Drawers whose consumer is gone
// are removed first and their replies purged, and a Drawer still past it
// is refused (ErrEngine naming MaxDrawers). A stream that
// takes every Drawer (mdap.replies.>, made by a client) is used as it is.
func serveDrawer(ctx context.Context, js jetstream.JetStream, id string, cfg ProvisionConfig) error {
	repliesMu.Lock()
	defer repliesMu.Unlock()
	st, err := js.Stream(ctx, RepliesStream)
	if err != nil {
		return err
	}
	c := st.CachedInfo().Config
	subj := drawerReplies(id)
	if !slices.Contains(c.Subjects, subj) && !slices.Contains(c.Subjects, repliesSubject+">") {
		// Drawers whose consumer is gone (closed, or unused for an hour)
		// make room, and their replies go.
		inUse, err := drawersInUse(ctx, st)
		if err != nil {
			return err
		}
		var gone []string
		c.Subjects = slices.DeleteFunc(c.Subjects, func(s string) bool {
			d, ok := drawerOf(s)
			if ok && !inUse[d] {
				gone = append(gone, d)
			}
			return ok && !inUse[d]
		})
		if n := countDrawers(c.Subjects); n >= cfg.maxDrawers() {
			return fmt.Errorf("%w: the engine takes the replies of %d Drawers (coordinators), its most (ProvisionConfig.MaxDrawers): one is freed when its coordinator closes it, or an hour after it stopped", ErrEngine, n)
		}
		c.Subjects = append(c.Subjects, subj)
		if _, err := js.UpdateStream(ctx, c); err != nil {
			return err
		}
		// Replies stored for Drawers gone, refused from now on: a
		// flooder's among them, which would otherwise stay an hour.
		for _, d := range gone {
			if err := st.Purge(ctx, jetstream.WithPurgeSubject(repliesSubject+d+".>")); err != nil {
				return err
			}
		}
	}
	_, err = js.CreateConsumer(ctx, RepliesStream, replyConsumerConfig(id))
	return err
}

// countDrawers is how many of subjects are Drawers' reply subjects.
func countDrawers(subjects []string) int {
	n := 0
	for _, s := range subjects {
		if _, ok := drawerOf(s); ok {
			n++
		}
	}
	return n
}

// repliesFull returns an error wrapping ErrEngine, naming RepliesStream
// and that it is full, when the stream refuses new replies for want of
// room (less than its largest reply left, or its most messages), so that
// a sample whose reply cannot be stored fails instead of waiting out its
// Timeout; nil otherwise, and when the engine cannot say. A sample calls
// it after waiting DrawerConfig.NoWorker; the answer is kept for
// routeCheckEvery, so many waiting samples cost one look.
func (d *Drawer) repliesFull(ctx context.Context) error {
	d.fullMu.Lock()
	defer d.fullMu.Unlock()
	if time.Since(d.fullAt) < routeCheckEvery {
		return d.fullErr
	}
	d.fullAt = time.Now()
	cctx, cancel := context.WithTimeout(ctx, routeCheckEvery)
	defer cancel()
	d.fullErr = nil
	if st, err := d.js.Stream(cctx, RepliesStream); err == nil {
		d.fullErr = streamFull(st.CachedInfo())
	}
	return d.fullErr
}

// streamFull is repliesFull's verdict on a reply stream's state.
func streamFull(info *jetstream.StreamInfo) error {
	c, s := info.Config, info.State
	if c.Discard != jetstream.DiscardNew {
		return nil
	}
	largest := int64(DefaultReplyBytes)
	if c.MaxMsgSize > 0 {
		largest = int64(c.MaxMsgSize)
	}
	bytesFull := c.MaxBytes > 0 && c.MaxBytes-int64(s.Bytes) < largest
	if !bytesFull && (c.MaxMsgs <= 0 || int64(s.Msgs) < c.MaxMsgs) {
		return nil
	}
	return fmt.Errorf("%w: the reply stream %s is full (%d replies, %d of %d bytes): new replies are refused, so this sample's cannot be stored; the engine's operator may purge it with the admin credential (nats stream purge %s)",
		ErrEngine, info.Config.Name, s.Msgs, s.Bytes, c.MaxBytes, info.Config.Name)
}
