package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultLeaseTTL is how long a journal's lease outlives a coordinator
// that stopped refreshing it (it died, or lost the server) when
// JournalConfig.LeaseTTL is zero. It outlasts what a node's stall costs a
// lease on a cluster of three: the holder's client leaves the node
// (StallDetect), and when the node led the lease bucket, the others
// elect a leader (4 to 9 s in nats-server), all after a refresh up to a
// quarter of the TTL old. With 10 s, a lease whose bucket the stalled
// node led expired.
const DefaultLeaseTTL = 20 * time.Second

// opTimeout bounds one engine operation of a journal store, which has no
// context of its own (maker.JournalStore's methods take none).
const opTimeout = 30 * time.Second

// JournalConfig configures a run's journal on the engine.
type JournalConfig struct {
	// LeaseTTL is how long the run's lease lasts without a refresh; the
	// holder refreshes it every quarter of it. 0 means DefaultLeaseTTL. The
	// lease bucket is created with the first TTL asked for; later
	// journals use the bucket's.
	LeaseTTL time.Duration
	// WaitLock is how long CreateJournal and OpenJournal wait for a lease
	// held by another coordinator: one that died frees it within
	// LeaseTTL. 0 means not at all: ErrJournalLocked at once.
	WaitLock time.Duration
	// Owner names the holder in the lease, shown to a coordinator that
	// finds the run locked; empty means host/pid.
	Owner string
	// Replicas is the replica count of the journal stream and the lease
	// bucket when they are created; 0 means 1.
	Replicas int
	// MaxAge is the retention of a journal created now: its lines are
	// removed that long after they were written; 0 means
	// DefaultRetention. A run resumed after its first lines expired is
	// refused (maker.ErrJournalCorrupt, naming the retention); remove
	// what is left with RemoveRun (maker nats rm RUN).
	MaxAge time.Duration
	// Unsigned opts the journal out of signing (maker.JournalUnsigned):
	// by default it is signed, and its chain head kept in this machine's
	// state folder (maker.StateDir), as a file journal's; a coordinator
	// resuming a run another machine started needs that machine's key
	// and head (the same MDAP_STATE_DIR, or MDAP_JOURNAL_KEY and the
	// head).
	Unsigned bool
}

// JournalName is the name a journal on the engine goes by in messages
// ("nats:RUN", as a file journal goes by its path).
func JournalName(run string) string { return "nats:" + run }

// CreateJournal starts the journal of a new run named run (see checkName:
// letters, digits, '-', '_') on the engine: a stream MDAP_JOURNAL_<run>
// holding one message per journal line, locked by a lease in LeaseBucket.
// It is a maker.Journal like a file's: hand it to maker.Solver.Journal
// and Close it when the run ends.
//
// Guarantees: a line is stored on the server (acknowledged) before Flush
// returns, which the Journal does before each next step: a coordinator
// killed at any moment loses no decided step. Sync is the same wait: a
// server's power loss costs the last lines unless the server syncs every
// write (ServerConfig.SyncAlways) or the stream has 3 replicas. Exclusion:
// one coordinator per run, by a lease that expires LeaseTTL after its
// holder stops refreshing it; and every append expects the stream's last
// sequence, so even a coordinator that lost its lease without knowing can
// never interleave lines with the one that took over.
//
// Errors: ErrConfig (a bad run name); maker.ErrJournalExists when the run
// already has lines (resume it with OpenJournal, or DeleteJournal it);
// maker.ErrJournalLocked when another coordinator holds the lease beyond
// WaitLock; ErrEngine.
func CreateJournal(ctx context.Context, js jetstream.JetStream, run string, cfg JournalConfig) (*maker.Journal, error) {
	return openJournal(ctx, js, run, cfg, true)
}

// OpenJournal opens the journal of run on the engine to resume it, taking
// its lease (see CreateJournal for the guarantees, and maker.NewJournal
// for what is read and refused). Errors: ErrConfig; maker.ErrJournalPath
// when the engine has no journal for run; maker.ErrJournalLocked;
// maker.ErrJournalCorrupt, maker.ErrJournalVersion; ErrEngine.
func OpenJournal(ctx context.Context, js jetstream.JetStream, run string, cfg JournalConfig) (*maker.Journal, error) {
	return openJournal(ctx, js, run, cfg, false)
}

// journalStreamConfig is run's journal stream, bounded to maxBytes (0
// means DefaultRunBytes). A full journal refuses new lines (DiscardNew:
// never its oldest), so its run fails at its next step naming it.
func journalStreamConfig(run string, n int, maxAge time.Duration, maxBytes int64) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		MaxAge:      cmpOr(maxAge, DefaultRetention),
		MaxBytes:    cmpOr(maxBytes, DefaultRunBytes),
		Discard:     jetstream.DiscardNew,
		Name:        JournalStreamPrefix + run,
		Description: "mdap journal of run " + run,
		Subjects:    []string{journalSubject + run},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas(n),
		DenyDelete:  true,
	}
}

func openJournal(ctx context.Context, js jetstream.JetStream, run string, cfg JournalConfig, create bool) (*maker.Journal, error) {
	if err := checkName("run", run); err != nil {
		return nil, err
	}
	if cfg.MaxAge < 0 {
		return nil, fmt.Errorf("%w: journal MaxAge %s: must be 0 (the default) or positive", ErrConfig, cfg.MaxAge)
	}
	l, err := acquireLease(ctx, js, run, cfg)
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, JournalStreamPrefix+run)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound) && create:
		// The engine makes it where there is one (a server with roles).
		err = askAgent(ctx, js.Conn(), "journal."+run, agentRequest{Name: run, MaxAge: cmpOr(cfg.MaxAge, DefaultRetention)})
		switch {
		case err == nil:
			st, err = js.Stream(ctx, JournalStreamPrefix+run)
		case errors.Is(err, errNoAgent):
			st, err = ensureStream(ctx, js, journalStreamConfig(run, cfg.Replicas, cfg.MaxAge, 0))
		}
	case errors.Is(err, jetstream.ErrStreamNotFound):
		err = fmt.Errorf("%w: the engine has no journal for run %q (start a run with it first)", maker.ErrJournalPath, run)
	case err != nil:
		err = fmt.Errorf("%w: journal stream of %q: %w", ErrEngine, run, err)
	}
	if err != nil {
		l.release()
		return nil, err
	}
	s := &journalStore{js: js, stream: st, run: run, subject: journalSubject + run, lease: l}
	if err := s.load(ctx); err != nil {
		l.release()
		return nil, err
	}
	if create && s.lines > 0 {
		l.release()
		return nil, fmt.Errorf("%w: %s has %d lines (resume it, or remove it with: maker nats rm %s)", maker.ErrJournalExists, JournalName(run), s.lines, run)
	}
	var opts []maker.JournalOption
	if cfg.Unsigned {
		opts = append(opts, maker.JournalUnsigned())
	}
	j, err := maker.NewJournal(s, opts...)
	if err != nil {
		l.release()
		if s.first > 1 && s.maxAge > 0 && errors.Is(err, maker.ErrJournalCorrupt) {
			err = fmt.Errorf("%w (its lines before sequence %d are gone: the journal's retention is %s, and older lines are removed; remove what is left with: maker nats rm %s)", err, s.first, s.maxAge, run)
		}
		return nil, err
	}
	return j, nil
}

// DeleteJournal deletes the journal of run from the engine, taking its
// lease first (so a run in progress is never deleted under its
// coordinator: maker.ErrJournalLocked). Deleting a journal that does not
// exist is not an error.
func DeleteJournal(ctx context.Context, js jetstream.JetStream, run string, cfg JournalConfig) error {
	if err := checkName("run", run); err != nil {
		return err
	}
	l, err := acquireLease(ctx, js, run, cfg)
	if err != nil {
		return err
	}
	defer l.release()
	if err := js.DeleteStream(ctx, JournalStreamPrefix+run); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("%w: delete the journal of %q: %w", ErrEngine, run, err)
	}
	return nil
}

// ExportJournal writes the journal of run to w as a journal file: one line
// per message, each ending in a newline. maker.OpenJournal reads the file
// (to inspect a run with the usual tools, or resume it without the
// engine). It takes no lease: a run in progress is exported up to its
// last acknowledged line. Errors: maker.ErrJournalPath when there is no
// such journal; ErrEngine; w's error.
func ExportJournal(ctx context.Context, js jetstream.JetStream, run string, w io.Writer) error {
	if err := checkName("run", run); err != nil {
		return err
	}
	st, err := js.Stream(ctx, JournalStreamPrefix+run)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("%w: the engine has no journal for run %q", maker.ErrJournalPath, run)
	}
	if err != nil {
		return fmt.Errorf("%w: journal stream of %q: %w", ErrEngine, run, err)
	}
	s := &journalStore{js: js, stream: st, run: run}
	if err := s.load(ctx); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	err = s.Lines(0, func(_ int, line []byte) error {
		if _, err := bw.Write(line); err != nil {
			return err
		}
		return bw.WriteByte('\n')
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// journalStore is a maker.JournalStore over one stream: line n is the
// message at sequence first+n. Messages are atomic, so there is never a
// torn line.
type journalStore struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	run     string
	subject string
	lease   *lease

	maxAge time.Duration // the stream's retention
	first  uint64        // the sequence of line 0
	last   uint64        // the stream's last sequence, appends counted
	lines  int
	acks   []pendingLine // appends not yet confirmed, in order
	err    error         // the first failed append: the store is then unusable
}

func (s *journalStore) load(ctx context.Context) error {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("%w: journal stream of %q: %w", ErrEngine, s.run, err)
	}
	st := info.State
	s.last, s.lines = st.LastSeq, int(st.Msgs)
	s.first = st.FirstSeq
	if st.Msgs == 0 {
		s.first = st.LastSeq + 1
	}
	s.maxAge = info.Config.MaxAge
	if s.lines > 0 && st.LastSeq-st.FirstSeq+1 != st.Msgs {
		return fmt.Errorf("%w: %s has %d lines between sequences %d and %d: lines were deleted", maker.ErrJournalCorrupt, JournalName(s.run), st.Msgs, st.FirstSeq, st.LastSeq)
	}
	return nil
}

func (s *journalStore) Name() string { return JournalName(s.run) }

// Lines reads the lines from line from on through an ordered consumer:
// one stream, no round trip per line.
func (s *journalStore) Lines(from int, fn func(n int, line []byte) error) error {
	if from >= s.lines {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	start, end := s.first+uint64(from), s.first+uint64(s.lines)-1
	cons, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   start,
	})
	if err != nil {
		return fmt.Errorf("%w: read %s: %w", ErrEngine, s.Name(), err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("%w: read %s: %w", ErrEngine, s.Name(), err)
	}
	defer it.Stop()
	for want := start; want <= end; want++ {
		msg, err := it.Next(jetstream.NextMaxWait(opTimeout))
		if err != nil {
			return fmt.Errorf("%w: read %s line %d: %w", ErrEngine, s.Name(), want-s.first+1, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("%w: read %s: %w", ErrEngine, s.Name(), err)
		}
		if got := md.Sequence.Stream; got != want {
			return fmt.Errorf("%w: %s: sequence %d where %d was expected: lines were deleted", maker.ErrJournalCorrupt, s.Name(), got, want)
		}
		if err := fn(int(want-s.first), msg.Data()); err != nil {
			return err
		}
	}
	return nil
}

func (s *journalStore) Torn() []byte { return nil }

// Append publishes line asynchronously, expecting the stream's last
// sequence to be the previous line's: a line is stored right after the
// previous one, or not at all.
func (s *journalStore) Append(line []byte) error {
	if s.err != nil {
		return s.err
	}
	if err := s.lease.check(); err != nil {
		return err
	}
	f, err := s.js.PublishAsync(s.subject, line, jetstream.WithExpectLastSequence(s.last), jetstream.WithExpectStream(JournalStreamPrefix+s.run),
		jetstream.WithMsgID(s.run+"."+strconv.FormatUint(s.last+1, 10)))
	if err != nil {
		s.err = fmt.Errorf("%w: append to %s: %w", ErrEngine, s.Name(), err)
		return s.err
	}
	s.acks = append(s.acks, pendingLine{f: f, seq: s.last + 1})
	s.last++
	s.lines++
	return nil
}

// pendingLine is an appended line waiting for its acknowledgement: the
// stream sequence it must land at, and whether it was published again.
type pendingLine struct {
	f      jetstream.PubAckFuture
	seq    uint64
	resent bool
}

// appendTry is how long Flush waits for a line's acknowledgement before
// it publishes the line again.
const appendTry = 2 * time.Second

// appendPause is how long Flush waits before it publishes again lines
// whose append was refused at once (no stream leader yet, the first copy
// still being stored).
const appendPause = 100 * time.Millisecond

// errNoAck: no acknowledgement within appendTry.
var errNoAck = errors.New("no acknowledgement yet")

// Flush waits until the server has acknowledged every appended line,
// within opTimeout. A line whose acknowledgement was lost (the
// connection left a stalled or dead node for another: Connect), refused
// for want of a stream leader (a node's stall or death, until the
// others elect one), or not given within appendTry, is published again
// with the lines after it, each with its message id and expectations:
// the stream keeps a line once (a copy of a stored line is dropped by its
// Nats-Msg-Id, or found at its sequence), so a node's stall costs a
// moment, not the run.
func (s *journalStore) Flush() error {
	if s.err != nil {
		return s.err
	}
	deadline := time.Now().Add(opTimeout)
	for len(s.acks) > 0 {
		p := s.acks[0]
		try := time.NewTimer(min(appendTry, max(time.Until(deadline), 0)))
		var err error
		select {
		case ack := <-p.f.Ok():
			if ack.Sequence != p.seq { // a duplicate's acknowledgement naming another line
				err = fmt.Errorf("%w: line acknowledged at sequence %d, not %d", errNoAck, ack.Sequence, p.seq)
			}
		case err = <-p.f.Err():
		case <-try.C:
			err = errNoAck
		}
		try.Stop()
		if err != nil && p.resent && isWrongLastSequence(err) && s.storedAt(p) {
			err = nil // an earlier copy landed; its acknowledgement was lost
		}
		if err == nil {
			s.acks = s.acks[1:]
			continue
		}
		if retryAppend(err) && time.Now().Before(deadline) {
			if !errors.Is(err, errNoAck) {
				time.Sleep(appendPause) // an answer that came at once is not hammered
			}
			s.resend()
			continue
		}
		s.err = fmt.Errorf("%w: append to %s (stream %s): %w%s", ErrEngine, s.Name(), JournalStreamPrefix+s.run, err, fullHint(err))
		switch {
		case errors.Is(err, jetstream.ErrKeyExists) || isWrongLastSequence(err):
			s.err = fmt.Errorf("%w: %s was written by another coordinator: %w", ErrLeaseTaken, s.Name(), err)
		case errors.Is(err, errNoAck):
			s.err = fmt.Errorf("%w: append to %s: no acknowledgement within %s", ErrEngine, s.Name(), opTimeout)
		}
		s.acks = s.acks[1:]
		return s.err
	}
	return s.lease.check()
}

// retryAppend reports whether a line's append may have failed only for
// want of a server or a stream leader, so that publishing it again may
// land it.
func retryAppend(err error) bool {
	var je jetstream.JetStreamError
	if errors.As(err, &je) && je.APIError() != nil && je.APIError().ErrorCode == errCodeDuplicateInProcess {
		return true // the first copy is still being stored: its outcome decides
	}
	return errors.Is(err, errNoAck) || errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, jetstream.ErrAsyncPublishTimeout)
}

// errCodeDuplicateInProcess is the server's answer to a copy of a line
// whose first copy is still being stored (nats-server's
// JSStreamDuplicateMessageConflict: "duplicate message id is in
// process"); nats.go names no constant for it.
const errCodeDuplicateInProcess jetstream.ErrorCode = 10158

// resend publishes every line still waiting again, in order, with its
// headers (message id, expected stream and last sequence).
func (s *journalStore) resend() {
	for i, p := range s.acks {
		m := p.f.Msg()
		f, err := s.js.PublishMsgAsync(&nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		if err != nil {
			return // the lines left keep their failed futures: the next wait tries again
		}
		s.acks[i] = pendingLine{f: f, seq: p.seq, resent: true}
	}
}

// storedAt reports whether the stream holds p's line at p's sequence: a
// copy published again was refused (the stream's last sequence moved
// on) because the first one was stored.
func (s *journalStore) storedAt(p pendingLine) bool {
	ctx, cancel := context.WithTimeout(context.Background(), appendTry)
	defer cancel()
	m, err := s.stream.GetMsg(ctx, p.seq)
	return err == nil && string(m.Data) == string(p.f.Msg().Data)
}

func isWrongLastSequence(err error) bool {
	var je jetstream.JetStreamError
	if errors.As(err, &je) && je.APIError() != nil {
		return je.APIError().ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
	}
	return false
}

// Sync is Flush: an acknowledged line is on the server (see CreateJournal
// for a server's power loss).
func (s *journalStore) Sync() error { return s.Flush() }

// Reset purges the stream: a journal that never began starts over.
func (s *journalStore) Reset() error {
	if err := s.Flush(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := s.stream.Purge(ctx); err != nil {
		return fmt.Errorf("%w: reset %s: %w", ErrEngine, s.Name(), err)
	}
	s.first, s.lines = s.last+1, 0
	return nil
}

// Close waits for the appended lines and releases the lease.
func (s *journalStore) Close() error {
	err := s.Flush()
	if errors.Is(err, ErrLeaseLost) {
		s.lease.stopRefresh()
		return err
	}
	s.lease.release()
	return err
}

// lease is one coordinator's hold on a run: a key of LeaseBucket created
// by Create (which fails when it exists), refreshed by Update on the last
// revision, and gone when the bucket's TTL passes without a refresh.
type lease struct {
	kv       jetstream.KeyValue
	conn     *nats.Conn // whether a server is there at all; nil: not known
	key      string
	owner    []byte
	ttl      time.Duration
	mu       sync.Mutex
	rev      uint64
	lost     error
	done     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// leaseBucketConfig is the lease bucket's configuration.
func leaseBucketConfig(n int, ttl time.Duration) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      LeaseBucket,
		Description: "mdap journal leases: one coordinator per run",
		TTL:         ttl,
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas(n),
	}
}

// leaseBucket finds the lease bucket, or creates it where the client may
// (a server without roles; with roles the engine provisions it).
func leaseBucket(ctx context.Context, js jetstream.JetStream, cfg JournalConfig) (jetstream.KeyValue, time.Duration, error) {
	ttl := cmpOr(cfg.LeaseTTL, DefaultLeaseTTL)
	kv, err := js.KeyValue(ctx, LeaseBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, leaseBucketConfig(cfg.Replicas, ttl))
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, LeaseBucket)
		}
	}
	if noJetStream(err) {
		return nil, 0, errNoJetStream("lease bucket", err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w: lease bucket: %w", ErrEngine, err)
	}
	if st, err := kv.Status(ctx); err == nil && st.TTL() > 0 {
		ttl = st.TTL()
	}
	return kv, ttl, nil
}

// acquireLease takes run's lease, waiting up to cfg.WaitLock for a holder
// to release it or die.
func acquireLease(ctx context.Context, js jetstream.JetStream, run string, cfg JournalConfig) (*lease, error) {
	kv, ttl, err := leaseBucket(ctx, js, cfg)
	if err != nil {
		return nil, err
	}
	owner := cfg.Owner
	if owner == "" {
		host, _ := os.Hostname()
		owner = host + "/" + strconv.Itoa(os.Getpid())
	}
	l := &lease{kv: kv, conn: js.Conn(), key: run, owner: []byte(owner), ttl: ttl, done: make(chan struct{})}
	deadline := time.Now().Add(cfg.WaitLock)
	for {
		rev, err := unlessRefused(ctx, js.Conn(), "$KV."+LeaseBucket+"."+run, func(ctx context.Context) (uint64, error) {
			return kv.Create(ctx, run, l.owner)
		})
		if errors.Is(err, ErrAuth) {
			return nil, fmt.Errorf("%w (a run coordinator's key is for its own run only: maker nats run add %s issues one for this run)", err, run)
		}
		if err == nil {
			l.rev = rev
			break
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, fmt.Errorf("%w: lease of %q: %w", ErrEngine, run, err)
		}
		if time.Now().After(deadline) {
			holder := "another coordinator"
			if e, gerr := kv.Get(ctx, run); gerr == nil {
				holder = strconv.Quote(string(e.Value()))
			}
			return nil, fmt.Errorf("%w: %s is held by %s; its lease expires %s after its last refresh if it died: wait, or use another run name",
				maker.ErrJournalLocked, JournalName(run), holder, ttl)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(time.Second, max(ttl/5, 50*time.Millisecond))):
		}
	}
	l.wg.Go(l.refresh)
	return l, nil
}

// refresh renews the lease every quarter of its TTL until stopped. A
// refresh that fails is tried again every leaseRetry, each try bounded
// by leaseTry, so that a client that left a stalled node for a healthy
// one (Connect) renews within a moment of reaching it, and a lease
// survives a node's stall while the other nodes serve. A refresh refused
// (another holder, or the key expired on the server) loses the lease;
// so do refreshes missing for a whole TTL while the connection has no
// server (an outage), or for leaseGiveUp TTLs whatever the connection.
func (l *lease) refresh() {
	t := time.NewTimer(l.ttl / 4)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
		}
		l.mu.Lock()
		rev := l.rev
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), min(l.ttl/4, leaseTry))
		next, err := l.kv.Update(ctx, l.key, l.owner, rev)
		cancel()
		silent := time.Since(last).Round(time.Millisecond)
		wait := l.ttl / 4
		l.mu.Lock()
		switch {
		case err == nil:
			l.rev, last = next, time.Now()
		case (errors.Is(err, jetstream.ErrKeyExists) || isWrongLastSequence(err) || errors.Is(err, jetstream.ErrKeyNotFound)) && silent >= l.ttl:
			l.lost = fmt.Errorf("%w: %s: the engine did not answer for %s, so the lease expired (an outage or a stalled node, no other coordinator need be involved); resume the run: %w", ErrLeaseLost, JournalName(l.key), silent, err)
		case errors.Is(err, jetstream.ErrKeyExists) || isWrongLastSequence(err) || errors.Is(err, jetstream.ErrKeyNotFound):
			l.lost = fmt.Errorf("%w: %s was taken over by another coordinator (or removed) after this one missed its refreshes: %w", ErrLeaseLost, JournalName(l.key), err)
		case silent >= l.ttl && (l.conn == nil || !l.conn.IsConnected() || silent >= leaseGiveUp*l.ttl):
			l.lost = fmt.Errorf("%w: %s: the engine did not answer for %s, so the lease expired (an outage, no other coordinator involved); resume the run once the engine is back: %w", ErrLeaseLost, JournalName(l.key), silent, err)
		default:
			wait = leaseRetry
		}
		lost := l.lost != nil
		l.mu.Unlock()
		if lost {
			return
		}
		t.Reset(wait)
	}
}

// A failed lease refresh is tried again every leaseRetry, each try
// bounded by leaseTry; a connection that is up but answers nothing loses
// the lease after leaseGiveUp TTLs without a refresh.
const (
	leaseRetry  = 250 * time.Millisecond
	leaseTry    = 2 * time.Second
	leaseGiveUp = 3
)

// check returns the error of a lost lease.
func (l *lease) check() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

func (l *lease) stopRefresh() {
	if l == nil {
		return
	}
	l.stopOnce.Do(func() { close(l.done) })
	l.wg.Wait()
}

// release stops refreshing and deletes the key if it is still this
// holder's revision, so the next coordinator need not wait for the TTL.
func (l *lease) release() {
	if l == nil {
		return
	}
	l.stopRefresh()
	l.mu.Lock()
	rev, lost := l.rev, l.lost
	l.mu.Unlock()
	if lost != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_ = l.kv.Delete(ctx, l.key, jetstream.LastRevision(rev))
}
