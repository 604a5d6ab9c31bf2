package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
// (mdap.replies.<token>.*.*, the token a hash of the consumer's name:
// replyToken), and stores each under its Drawer and its worker's identity
// (mdap.replies.<token>.w.<worker>), at most
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
// Drawer yet (a stream needs one): no Drawer's token is _, and no
// worker may publish on it (a reply subject has three tokens more).
const noDrawer = repliesSubject + "_"

// DefaultMaxDrawers is the most Drawers the engine takes replies for at
// once when ProvisionConfig.MaxDrawers is 0: a coordinator process has
// one (a batch's coordinators one each).
const DefaultMaxDrawers = 32

// DefaultDrawerQuota is how many Drawers one coordinator identity may have
// the engine take replies for when ProvisionConfig.DrawerQuota is 0: a
// quarter of DefaultMaxDrawers (as DefaultRouteQuota of
// DefaultMaxRoutes), so that one coordinator credential cannot take every
// Drawer. The coordinator processes sharing a run key (or the shared
// coordinator key) share it: more of them at once need a larger quota.
const DefaultDrawerQuota = 8

// maxDrawers is the largest ProvisionConfig.MaxDrawers.
const maxDrawers = 4096

// drawerReplies is the subject of RepliesStream that takes the replies
// to the Drawer of token tok (replyToken): its jobs' reply subjects with
// a worker's identity.
func drawerReplies(tok string) string { return repliesSubject + tok + ".*.*" }

// isDrawerID reports whether id can name a Drawer: d and up to 63 letters
// or digits (a NUID), so it is one token of a subject and a consumer name.
func isDrawerID(id string) bool {
	return strings.HasPrefix(id, "d") && nameRE.MatchString(id) && !strings.ContainsAny(id, "-_")
}

// drawerOf is the token of the Drawer whose replies RepliesStream
// subject subj takes, and false for another subject.
func drawerOf(subj string) (string, bool) {
	tok, ok := strings.CutPrefix(subj, repliesSubject)
	if !ok {
		return "", false
	}
	tok, ok = strings.CutSuffix(tok, ".*.*")
	return tok, ok && isReplyToken(tok)
}

// A Drawer's reply consumer is named d and 32 random hex digits
// (newDrawerID), and that name is its only key: whoever knows it may read
// the consumer's state and pull its replies (a coordinator's permissions
// cannot name one consumer of many made at run time). So the name appears
// nowhere a coordinator or a worker can read: a Drawer's subjects carry
// its token instead, the first 32 hex digits of the name's SHA-256
// (replyToken), which the engine computes from the consumer list and no
// one can turn back into the name. Only the engine's agent deletes a
// reply consumer (a coordinator's Close asks it, showing the name).

// newDrawerID is a new Drawer's id, its reply consumer's name: d and 128
// random bits in hex.
func newDrawerID() string { return "d" + leaseKey() }

// replyToken is the subject token of the Drawer whose reply consumer is
// named id: the first 128 bits of its SHA-256, in hex.
func replyToken(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

// isReplyToken reports whether tok is a replyToken.
func isReplyToken(tok string) bool {
	if len(tok) != 32 {
		return false
	}
	_, err := hex.DecodeString(tok)
	return err == nil && strings.ToLower(tok) == tok
}

// replySpace keeps RepliesStream's subjects a function of its reply
// consumers: the Drawer subject of every consumer that exists, and of no
// consumer seen absent on two looks absentGap apart. Every agent keeps
// one (its looks), and reconciles the stream every replyReconcile: agents
// in several processes, and Provision beside them, each write the whole
// list (JetStream has no conditional update of a stream), so a write
// based on a list read before another agent's may drop that agent's new
// subject; the next reconcile of either puts it back, and a worker whose
// reply finds no stream meanwhile tries again (Worker.publishReply). A
// subject is removed at once only when its Drawer's Close asked the
// agent to delete its consumer.
type replySpace struct {
	mu     sync.Mutex
	absent map[string]time.Time // token → the first look that found no consumer
	// soon asks for a reconcile before the next tick: a worker's reply
	// found no stream for a live Drawer (its subject was dropped).
	soon chan struct{}
}

// missed asks for a reconcile now; asks while one is due are one.
func (r *replySpace) missed() {
	select {
	case r.soon <- struct{}{}:
	default:
	}
}

// drawerQuotaMu serializes serveDrawer's count of an identity's Drawers
// and the creation of its consumer.
var drawerQuotaMu sync.Mutex

// absentGap is how long a Drawer's consumer must stay absent, on two looks
// at least that far apart, before its subject is removed: a consumer list
// read while another agent adds a Drawer (its consumer first, then its
// subject) never costs a live Drawer its subject.
const absentGap = 5 * time.Second

// replyReconcile is how often an agent reconciles RepliesStream's
// subjects: the longest a live Drawer's subject stays dropped by a
// concurrent write (a worker tries its reply again for noStreamWait).
const replyReconcile = time.Second

// liveDrawers is the tokens of the reply consumers of stream st.
func liveDrawers(ctx context.Context, st jetstream.Stream) (map[string]bool, error) {
	live := map[string]bool{}
	cl := st.ConsumerNames(ctx)
	for name := range cl.Name() {
		if isDrawerID(name) {
			live[replyToken(name)] = true
		}
	}
	return live, cl.Err()
}

// drawerTokens is the Drawer tokens of subjects.
func drawerTokens(subjects []string) map[string]bool {
	toks := map[string]bool{}
	for _, s := range subjects {
		if tok, ok := drawerOf(s); ok {
			toks[tok] = true
		}
	}
	return toks
}

// wantSubjects is RepliesStream's subjects for the live Drawers, keeping
// those of had that look (keep) says to keep, sorted.
func wantSubjects(live, had map[string]bool, keep func(tok string) bool) []string {
	subjects := []string{noDrawer}
	for tok := range live {
		subjects = append(subjects, drawerReplies(tok))
	}
	for tok := range had {
		if !live[tok] && keep(tok) {
			subjects = append(subjects, drawerReplies(tok))
		}
	}
	slices.Sort(subjects)
	return subjects
}

// reconcile makes RepliesStream's subjects those of its live Drawers
// (wantSubjects), removing a subject only once its consumer was absent
// on two looks absentGap apart, or at once for a token of drop (a Drawer
// the agent closed), and purges the replies of the removed. A stream that
// takes every Drawer (mdap.replies.>, made by a client) is left as it is.
// It returns how many Drawers the stream takes.
func (r *replySpace) reconcile(ctx context.Context, js jetstream.JetStream, drop string) (int, error) {
	st, err := js.Stream(ctx, RepliesStream)
	if err != nil {
		return 0, err
	}
	c := st.CachedInfo().Config
	if slices.Contains(c.Subjects, repliesSubject+">") {
		return 0, nil
	}
	live, err := liveDrawers(ctx, st)
	if err != nil {
		return 0, err
	}
	had := drawerTokens(c.Subjects)
	now := time.Now()
	r.mu.Lock()
	if r.absent == nil {
		r.absent = map[string]time.Time{}
	}
	for tok := range r.absent {
		if live[tok] || !had[tok] {
			delete(r.absent, tok)
		}
	}
	want := wantSubjects(live, had, func(tok string) bool {
		if tok == drop {
			return false
		}
		first, seen := r.absent[tok]
		if !seen {
			r.absent[tok] = now
			return true
		}
		return now.Sub(first) < absentGap
	})
	r.mu.Unlock()
	if slices.Equal(want, sorted(c.Subjects)) {
		return len(want) - 1, nil
	}
	c.Subjects = want
	if _, err := js.UpdateStream(ctx, c); err != nil {
		return 0, err
	}
	// Replies stored for Drawers gone, refused from now on: a flooder's
	// among them, which would otherwise stay an hour.
	kept := drawerTokens(want)
	for tok := range had {
		if !kept[tok] {
			if err := st.Purge(ctx, jetstream.WithPurgeSubject(repliesSubject+tok+".>")); err != nil {
				return 0, err
			}
		}
	}
	return len(want) - 1, nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// provisionedRepliesConfig is RepliesStream as the engine provisions it:
// with cfg's bounds, on the subjects of the Drawers whose reply consumer
// exists and of those it already takes (removed only by an agent's
// reconcile, which looks twice), so that a reply to a Drawer the engine
// never made is refused (no stream takes it).
func provisionedRepliesConfig(ctx context.Context, js jetstream.JetStream, cfg ProvisionConfig) (jetstream.StreamConfig, error) {
	want := repliesStreamConfig(cfg.Replicas)
	want.MaxBytes = cfg.sampleBytes()
	want.MaxMsgSize = cfg.replyBytes()
	want.MaxMsgsPerSubject = cfg.replyBound()
	want.Subjects = []string{noDrawer}
	st, err := js.Stream(ctx, RepliesStream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
	case err != nil:
		return want, provisionErr("stream "+RepliesStream, cfg.Replicas, err)
	default:
		live, err := liveDrawers(ctx, st)
		if err != nil {
			return want, provisionErr("the Drawers of "+RepliesStream, cfg.Replicas, err)
		}
		want.Subjects = wantSubjects(live, drawerTokens(st.CachedInfo().Config.Subjects), func(string) bool { return true })
	}
	return want, nil
}

// serveDrawer makes the reply consumer of the Drawer id and makes
// RepliesStream take its replies, while the engine takes replies for
// fewer than cfg.MaxDrawers Drawers; a Drawer past it is refused
// (ErrEngine naming MaxDrawers). At the request of the coordinator
// identity by ("": none, no quota) a reply consumer not made yet is made
// only while fewer than cfg's DrawerQuota consumers made at by's request
// exist (ErrEngine naming the quota) and within by's rate of new Drawers
// (rates, nil for none: errDrawerRate), and records by (addedByKey); one
// that exists costs nothing and keeps who asked first, but for one made
// before the quota (naming no one), which by adopts within its quota as
// if it made it: only its coordinator knows its name. The consumer comes
// first, so that any agent's reconcile from then on keeps (or puts back)
// its subject; the subject is checked once written, and written again if
// a concurrent write dropped it. A stream that takes every Drawer
// (mdap.replies.>, made by a client) needs no subject.
func serveDrawer(ctx context.Context, js jetstream.JetStream, id string, cfg ProvisionConfig, space *replySpace, rates *drawerRates, by string) error {
	// One count and creation at a time in this process, so that one
	// identity's Drawers asked at once stay within its quota (two agents
	// at once may admit one past it, as MaxDrawers).
	drawerQuotaMu.Lock()
	defer drawerQuotaMu.Unlock()
	st, err := js.Stream(ctx, RepliesStream)
	if err != nil {
		return err
	}
	want := replyConsumerConfig(id)
	cons, err := js.Consumer(ctx, RepliesStream, id)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return err
	}
	exists, who := err == nil, ""
	if exists {
		who = cons.CachedInfo().Config.Metadata[addedByKey]
	}
	adopt := exists && who == "" && by != ""
	if who == "" && by != "" {
		n, err := countAddedBy(ctx, js, RepliesStream, by)
		if err != nil {
			return err
		}
		if n >= cfg.drawerQuota() {
			return fmt.Errorf("%w: coordinator identity %s has %d Drawers the engine takes replies for, its quota (maker nats --drawer-quota, ProvisionConfig.DrawerQuota): one is freed when its coordinator closes it, or an hour after it stopped",
				ErrEngine, truncate(by, 12), n)
		}
		if !adopt {
			if wait := rates.take(by, cfg.drawerEvery(), cfg.drawerQuota()); wait > 0 {
				return errDrawerRate(by, cfg, wait)
			}
		}
		who = by
	}
	if who != "" {
		want.Metadata = map[string]string{addedByKey: who}
	}
	tok := replyToken(id)
	if c := st.CachedInfo().Config; !slices.Contains(c.Subjects, repliesSubject+">") && !slices.Contains(c.Subjects, drawerReplies(tok)) {
		live, err := liveDrawers(ctx, st)
		if err != nil {
			return err
		}
		for t := range drawerTokens(c.Subjects) {
			live[t] = true
		}
		if n := len(live); !live[tok] && n >= cfg.maxDrawers() {
			return fmt.Errorf("%w: the engine takes the replies of %d Drawers (coordinators), its most (ProvisionConfig.MaxDrawers): one is freed when its coordinator closes it, or an hour after it stopped", ErrEngine, n)
		}
	}
	put := js.CreateConsumer
	if adopt {
		put = js.UpdateConsumer
	}
	if _, err := put(ctx, RepliesStream, want); err != nil {
		return err
	}
	for range 3 {
		if _, err := space.reconcile(ctx, js, ""); err != nil {
			return err
		}
		st, err := js.Stream(ctx, RepliesStream)
		if err != nil {
			return err
		}
		if c := st.CachedInfo().Config; slices.Contains(c.Subjects, drawerReplies(tok)) || slices.Contains(c.Subjects, repliesSubject+">") {
			return nil
		}
	}
	return fmt.Errorf("%w: the reply stream %s did not keep this Drawer's subject (other agents writing at once); ask again", ErrEngine, RepliesStream)
}

// trimUnowned deletes the reply consumers naming no identity (made by an
// agent from before the Drawer quota, on a store that kept them) past
// quota, the least recently active first, and returns how many it
// deleted: those not adopted yet (serveDrawer) count together as one
// identity, so that Drawers held from before an upgrade cannot take the
// engine's MaxDrawers past one quota. ServeAgent calls it as it starts.
func trimUnowned(ctx context.Context, js jetstream.JetStream, quota int) (int, error) {
	st, err := js.Stream(ctx, RepliesStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var unowned []*jetstream.ConsumerInfo
	cl := st.ListConsumers(ctx)
	for ci := range cl.Info() {
		if isDrawerID(ci.Name) && ci.Config.Metadata[addedByKey] == "" {
			unowned = append(unowned, ci)
		}
	}
	if err := cl.Err(); err != nil {
		return 0, err
	}
	active := func(ci *jetstream.ConsumerInfo) time.Time {
		if ci.Delivered.Last != nil {
			return *ci.Delivered.Last
		}
		return ci.Created
	}
	slices.SortFunc(unowned, func(a, b *jetstream.ConsumerInfo) int { return active(b).Compare(active(a)) })
	n := 0
	for _, ci := range unowned[min(quota, len(unowned)):] {
		if err := js.DeleteConsumer(ctx, RepliesStream, ci.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return n, err
		}
		n++
	}
	return n, nil
}

// dropDrawer deletes the reply consumer of the Drawer id, removes its
// subject and purges its replies: a Drawer's Close, through the agent.
func dropDrawer(ctx context.Context, js jetstream.JetStream, id string, space *replySpace) error {
	if err := js.DeleteConsumer(ctx, RepliesStream, id); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return err
	}
	_, err := space.reconcile(ctx, js, replyToken(id))
	return err
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
