package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/wait"
	"github.com/mdap-go/mdap/maker/journal"
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
// context of its own (journal.Store's methods take none).
const opTimeout = 30 * time.Second

// leaderRetryWait is how long a write waits before it is sent again when
// no server answered for its stream (a replicated stream electing a new
// leader after losing a node takes a few seconds).
const leaderRetryWait = 250 * time.Millisecond

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
	// finds the run locked; empty means host/pid. At most MaxOwnerBytes.
	Owner string
	// Replicas is the replica count of the shared streams (JournalsStream
	// and the lease bucket) when this client creates them: on a server
	// without roles that nobody provisions. 0 means 1. With roles the
	// engine's replicas apply (ProvisionConfig.Replicas).
	Replicas int
	// MaxAge is the retention of the lines written now: each is removed
	// that long after it was written (a per-message TTL); 0 means
	// DefaultRetention, and at most MaxRetention. A run resumed after its
	// first lines expired is refused (journal.ErrCorrupt, naming the
	// retention); remove what is left with RemoveRun (maker nats rm RUN).
	MaxAge time.Duration
	// Unsigned opts the journal out of signing (journal.Unsigned):
	// by default it is signed, and its chain head kept in this machine's
	// state folder (journal.StateDir), as a file journal's; a coordinator
	// resuming a run another machine started needs that machine's key
	// and head (the same MDAP_STATE_DIR, or MDAP_JOURNAL_KEY and the
	// head).
	Unsigned bool
}

// JournalName is the name a journal on the engine goes by in messages
// ("nats:RUN", as a file journal goes by its path; a batch's task
// journal is "nats:QUEUE.TASK").
func JournalName(run string) string { return "nats:" + run }

// journalRef names one journal: key is its lease's key and the last
// tokens of its subject (a run's name, or <queue>.<task> for a batch's
// task), legacy the stream an earlier mdap kept it on.
type journalRef struct{ key, legacy string }

func runJournal(run string) journalRef {
	return journalRef{key: run, legacy: JournalStreamPrefix + run}
}

// taskJournal names the journal of a batch's task; an earlier mdap's
// batch is refused as a whole (OpenTaskQueue), so its tasks' streams are
// not looked for.
func taskJournal(queue, task string) journalRef {
	return journalRef{key: queue + "." + task}
}

// CreateJournal starts the journal of a new run named run (see
// CheckRunName) on the engine: the subject mdap.journals.<run> of the
// shared JournalsStream, one message per journal line, locked by a lease
// in LeaseBucket. It is a journal.Journal like a file's: hand it to
// maker.Solver.Journal and Close it when the run ends.
//
// Guarantees: a line is stored on the server (acknowledged, by a majority
// of the stream's replicas on a cluster) before Flush returns, which the
// Journal does before each next step: a coordinator killed at any moment
// loses no decided step. Sync is the same wait: a server's power loss
// costs the last lines unless the server syncs every write
// (ServerConfig.SyncAlways) or the stream has 3 replicas. Exclusion: one
// coordinator per run, by a lease that expires LeaseTTL after its holder
// stops refreshing it; and every line is stored only if the journal's last
// line is the one its writer wrote before (the subject's last sequence),
// so even a coordinator that lost its lease without knowing can never
// interleave lines with the one that took over. Cost: one round trip to
// the server per line at each Flush.
//
// Errors: ErrConfig (a bad run name); journal.ErrExists when the run
// already has lines (resume it with OpenJournal, or DeleteJournal it);
// journal.ErrLocked when another coordinator holds the lease beyond
// WaitLock; ErrOldLayout for a run an earlier mdap started on a stream of
// its own; ErrNotProvisioned; ErrEngine.
func CreateJournal(ctx context.Context, js jetstream.JetStream, run string, cfg JournalConfig) (*journal.Journal, error) {
	if err := checkName("run", run); err != nil {
		return nil, err
	}
	return openJournal(ctx, js, runJournal(run), cfg, true)
}

// OpenJournal opens the journal of run on the engine to resume it, taking
// its lease (see CreateJournal for the guarantees, and journal.New
// for what is read and refused). Errors: ErrConfig; journal.ErrPath
// when the engine has no journal for run; journal.ErrLocked;
// journal.ErrCorrupt, journal.ErrVersion; ErrOldLayout;
// ErrEngine.
func OpenJournal(ctx context.Context, js jetstream.JetStream, run string, cfg JournalConfig) (*journal.Journal, error) {
	if err := checkName("run", run); err != nil {
		return nil, err
	}
	return openJournal(ctx, js, runJournal(run), cfg, false)
}

// runStream finds the shared run stream name, or creates the shared run
// streams where this client may (a server without roles); with roles a
// missing one is ErrNotProvisioned.
func runStream(ctx context.Context, js jetstream.JetStream, name string, n int) (jetstream.Stream, error) {
	st, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = unlessRefused(ctx, js.Conn(), "$JS.API.STREAM.CREATE.>", func(ctx context.Context) (struct{}, error) {
			return struct{}{}, ensureRunStreams(ctx, js, n)
		})
		switch {
		case errors.Is(err, ErrAuth):
			return nil, fmt.Errorf("%w: the stream %s is missing: run maker nats, or maker nats provision with the admin credential: %w", ErrNotProvisioned, name, err)
		case err == nil:
			st, err = js.Stream(ctx, name)
		}
	}
	if noJetStream(err) {
		return nil, errNoJetStream("stream "+name, err)
	}
	if err != nil && !errors.Is(err, ErrNotProvisioned) && !errors.Is(err, ErrEngine) {
		err = fmt.Errorf("%w: stream %s: %w", ErrEngine, name, err)
	}
	return st, err
}

// openJournal opens (or creates) the journal ref, trying again for up to
// opTimeout while the engine's answers fail for a while (a cluster
// electing new leaders after losing a node).
func openJournal(ctx context.Context, js jetstream.JetStream, ref journalRef, cfg JournalConfig, create bool) (*journal.Journal, error) {
	if cfg.MaxAge < 0 || cfg.MaxAge > MaxRetention {
		return nil, fmt.Errorf("%w: journal MaxAge %s: use 0 (the default) or a positive duration up to %s", ErrConfig, cfg.MaxAge, MaxRetention)
	}
	if len(cfg.Owner) > MaxOwnerBytes {
		return nil, fmt.Errorf("%w: journal Owner of %d bytes: use at most %d (it names the lease's holder)", ErrConfig, len(cfg.Owner), MaxOwnerBytes)
	}
	return retryPassing(ctx, 0, func(ctx context.Context) (*journal.Journal, error) {
		return openJournalOnce(ctx, js, ref, cfg, create)
	})
}

func openJournalOnce(ctx context.Context, js jetstream.JetStream, ref journalRef, cfg JournalConfig, create bool) (*journal.Journal, error) {
	s, err := openStoreOnce(ctx, js, ref, cfg, create)
	if err != nil {
		return nil, err
	}
	var opts []journal.Option
	if cfg.Unsigned {
		opts = append(opts, journal.Unsigned())
	}
	j, err := journal.New(s, opts...)
	if err != nil {
		s.lease.release()
		return nil, err
	}
	return j, nil
}

// openStoreOnce takes the lease of the journal ref and opens its lines
// on the engine: an existing journal's (create false), or a new one's.
func openStoreOnce(ctx context.Context, js jetstream.JetStream, ref journalRef, cfg JournalConfig, create bool) (*journalStore, error) {
	run, _, _ := strings.Cut(ref.key, ".")
	own, err := ownsRun(ctx, js, run)
	if err != nil {
		return nil, err
	}
	l, err := acquireLease(ctx, js, leaseBucketOf(run, own), ref.key, cfg)
	if err != nil {
		return nil, err
	}
	st, subject, err := journalHome(ctx, js, ref, cfg.Replicas, own)
	if err != nil {
		l.release()
		return nil, err
	}
	s := &journalStore{js: js, stream: st, run: ref.key, subject: subject, lease: l, maxAge: cmpOr(cfg.MaxAge, DefaultRetention)}
	if err := s.load(ctx); err != nil {
		l.release()
		return nil, err
	}
	switch {
	case s.lines == 0 && legacyStreamExists(ctx, js, ref.legacy):
		l.release()
		return nil, oldLayoutErr("the journal", ref.key, ref.legacy)
	case s.lines == 0 && !create:
		l.release()
		return nil, fmt.Errorf("%w: the engine has no journal for run %q (start a run with it first)", journal.ErrPath, ref.key)
	case s.lines > 0 && create:
		l.release()
		return nil, fmt.Errorf("%w: %s has %d lines (resume it, or remove it with: maker nats rm %s)", journal.ErrExists, JournalName(ref.key), s.lines, ref.key)
	}
	return s, nil
}

// DeleteJournal deletes the journal of run from the engine (its lines
// under JournalsStream, or the stream an earlier mdap kept it on), taking
// its lease first (so a run in progress is never deleted under its
// coordinator: journal.ErrLocked). It needs the admin identity on a
// server with roles (a coordinator may not purge a shared stream: ErrAuth;
// maker nats rm signs in as the admin). Deleting a journal that does not
// exist is not an error.
func DeleteJournal(ctx context.Context, js jetstream.JetStream, run string, cfg JournalConfig) error {
	if err := checkName("run", run); err != nil {
		return err
	}
	return deleteJournal(ctx, js, runJournal(run), cfg)
}

func deleteJournal(ctx context.Context, js jetstream.JetStream, ref journalRef, cfg JournalConfig) error {
	// Its lease where a coordinator may hold it: the shared bucket, and
	// its run key's.
	run, _, _ := strings.Cut(ref.key, ".")
	buckets := []string{LeaseBucket}
	if _, err := js.KeyValue(ctx, RunLeaseBucket(run)); err == nil {
		buckets = append(buckets, RunLeaseBucket(run))
	}
	for _, b := range buckets {
		l, err := acquireLease(ctx, js, b, ref.key, cfg)
		if err != nil {
			return err
		}
		defer l.release()
	}
	if ref.legacy != "" {
		if err := js.DeleteStream(ctx, ref.legacy); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("%w: delete the journal of %q: %w", ErrEngine, ref.key, err)
		}
	}
	for _, h := range journalHomes(ref.key) {
		st, err := js.Stream(ctx, h.stream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err == nil {
			_, err = unlessRefused(ctx, js.Conn(), "$JS.API.STREAM.PURGE."+h.stream, func(ctx context.Context) (struct{}, error) {
				return struct{}{}, st.Purge(ctx, jetstream.WithPurgeSubject(h.subject))
			})
		}
		if err != nil {
			return fmt.Errorf("%w: delete the journal of %q: %w", ErrEngine, ref.key, err)
		}
	}
	return nil
}

// home is where a journal may be: a stream and its subject.
type home struct{ stream, subject string }

// journalHomes are the places the journal key may be kept: its run key's
// stream, then the shared JournalsStream.
func journalHomes(key string) []home {
	run, _, _ := strings.Cut(key, ".")
	return []home{{RunStream(run), runJournalSubject(key)}, {JournalsStream, journalSubject + key}}
}

// ExportJournal writes the journal of run to w as a journal file: one line
// per message, each ending in a newline. journalfile.Open reads the file
// (to inspect a run with the usual tools, or resume it without the
// engine). A journal an earlier mdap kept on a stream of its own is
// exported all the same: resuming such a run from its file is how it
// moves to this mdap. It takes no lease: a run in progress is exported up
// to its last acknowledged line. Errors: journal.ErrPath when there
// is no such journal; ErrEngine; w's error.
func ExportJournal(ctx context.Context, js jetstream.JetStream, run string, w io.Writer) error {
	if err := checkName("run", run); err != nil {
		return err
	}
	ref := runJournal(run)
	var s *journalStore
	for _, h := range append([]home{{ref.legacy, legacyJournalSubject + run}}, journalHomes(run)...) {
		st, err := js.Stream(ctx, h.stream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: stream %s: %w", ErrEngine, h.stream, err)
		}
		s = &journalStore{js: js, stream: st, run: run, subject: h.subject}
		if err := s.load(ctx); err != nil {
			return err
		}
		if s.lines > 0 {
			break
		}
	}
	if s == nil || s.lines == 0 {
		return fmt.Errorf("%w: the engine has no journal for run %q", journal.ErrPath, run)
	}
	bw := bufio.NewWriter(w)
	err := s.Lines(0, func(_ int, line []byte) error {
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

// journalStore is a journal.Store over one subject of a stream: line
// n is the subject's n-th message (from 0). Messages are atomic, so there
// is never a torn line.
type journalStore struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	run     string
	subject string
	lease   *lease

	maxAge  time.Duration // the TTL of each line written
	last    uint64        // the subject's last sequence: the next line expects it
	lines   int           // lines stored, and appended
	pending [][]byte      // lines appended, not yet stored
	err     error         // the first failed append: the store is then unusable
}

// load reads how many lines the journal has and the sequence of its last
// line. The count comes from the stream's leader (stream info); the last
// line from a direct get, which any replica may answer, and a client's
// own node's replica first: one that is still catching up (its node was
// down, or just came back) answers with an older line. Such an answer is
// asked again until it is the line the leader counts (its lineHeader),
// within opTimeout.
func (s *journalStore) load(ctx context.Context) error {
	info, err := s.stream.Info(ctx, jetstream.WithSubjectFilter(s.subject))
	if err != nil {
		return fmt.Errorf("%w: journal of %q: %w", ErrEngine, s.run, err)
	}
	s.lines = int(info.State.Subjects[s.subject])
	s.last = 0
	if s.lines == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	for {
		m, err := s.stream.GetLastMsgForSubject(ctx, s.subject)
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return fmt.Errorf("%w: journal of %q: %w", ErrEngine, s.run, err)
		}
		if err == nil && !lineBefore(m, s.lines) {
			s.last = m.Sequence
			return nil
		}
		// The replica that answered has not caught up with the leader.
		if err := wait.Sleep(ctx, replicaRetryWait); err != nil {
			return fmt.Errorf("%w: journal of %q: the last of its %d lines was not found within %s (a replica catching up after a node came back): %w", ErrEngine, s.run, s.lines, opTimeout, err)
		}
	}
}

// lineBefore reports whether m, a journal's last line as a replica has
// it, is a line before line n (numbered from 1), so that the replica has
// not caught up: the lines after it were stored (acknowledged by a
// majority) before it answered. A line without a number (an earlier
// mdap's) cannot tell, and is taken as it is.
func lineBefore(m *jetstream.RawStreamMsg, n int) bool {
	got, err := strconv.Atoi(m.Header.Get(lineHeader))
	return err == nil && got < n
}

// replicaRetryWait is how long a read answered by a replica that has not
// caught up waits before it asks again.
const replicaRetryWait = 100 * time.Millisecond

func (s *journalStore) Name() string { return JournalName(s.run) }

// Lines reads the lines from line from on by batched direct gets of the
// journal's subject (lineBatch a request: no round trip per line). A
// client makes no consumer to read them (coordinatorPublications). A
// replica that has not caught up answers with fewer lines: the rest are
// asked again after replicaRetryWait, up to opTimeout. A journal whose
// first line is not line 1 lost its first lines to its retention
// (journal.ErrCorrupt, naming it).
func (s *journalStore) Lines(from int, fn func(n int, line []byte) error) error {
	if from >= s.lines {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if !s.stream.CachedInfo().Config.AllowDirect {
		// An earlier mdap's stream of one run, which only the admin
		// reads (ExportJournal).
		return s.linesByConsumer(ctx, from, fn)
	}
	api := "$JS.API.DIRECT.GET." + s.stream.CachedInfo().Config.Name
	n, next := 0, uint64(1)
	for n < s.lines {
		got, err := s.batch(ctx, api, next, func(seq uint64, m *nats.Msg) error {
			if err := s.checkLine(n, m.Header.Get(jetstream.SubjectHeader), m.Header); err != nil {
				return err
			}
			next = seq + 1
			n++
			if n-1 < from || n > s.lines {
				return nil
			}
			return fn(n-1, m.Data)
		})
		if err != nil {
			return err
		}
		if got == 0 && n < s.lines {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w: read %s line %d: %w", ErrEngine, s.Name(), n+1, ctx.Err())
			case <-time.After(replicaRetryWait):
			}
		}
	}
	return nil
}

// checkLine checks that the journal's line n (from 0) has its subject,
// and that its first is line 1.
func (s *journalStore) checkLine(n int, subject string, h nats.Header) error {
	if subject != s.subject {
		return fmt.Errorf("%w: %s: a message of %s among its lines", journal.ErrCorrupt, s.Name(), subject)
	}
	if first := h.Get(lineHeader); n == 0 && first != "" && first != "1" {
		retention := h.Get(jetstream.MsgTTLHeader)
		return fmt.Errorf("%w: %s: its lines before line %s are gone: the journal's retention is %s, and older lines are removed; remove what is left with: maker nats rm %s", journal.ErrCorrupt, s.Name(), first, retention, s.run)
	}
	return nil
}

// linesByConsumer is Lines through an ordered consumer, for a stream
// without direct gets.
func (s *journalStore) linesByConsumer(ctx context.Context, from int, fn func(n int, line []byte) error) error {
	cons, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{s.subject}})
	if err != nil {
		return fmt.Errorf("%w: read %s: %w", ErrEngine, s.Name(), err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("%w: read %s: %w", ErrEngine, s.Name(), err)
	}
	defer it.Stop()
	for n := 0; n < s.lines; n++ {
		msg, err := it.Next(jetstream.NextMaxWait(opTimeout))
		if err != nil {
			return fmt.Errorf("%w: read %s line %d: %w", ErrEngine, s.Name(), n+1, err)
		}
		if err := s.checkLine(n, msg.Subject(), msg.Headers()); err != nil {
			return err
		}
		if n >= from {
			if err := fn(n, msg.Data()); err != nil {
				return err
			}
		}
	}
	return nil
}

// lineBatch is how many lines one direct get of Lines asks for.
const lineBatch = 1024

// batch asks api for up to lineBatch messages of the journal's subject
// from sequence from on and hands each to fn with its sequence, until
// the server's end of batch; it returns how many came.
func (s *journalStore) batch(ctx context.Context, api string, from uint64, fn func(seq uint64, m *nats.Msg) error) (int, error) {
	nc := s.js.Conn()
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return 0, fmt.Errorf("%w: read %s: %w", ErrEngine, s.Name(), err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	req, _ := json.Marshal(struct {
		Seq   uint64 `json:"seq"`
		Next  string `json:"next_by_subj"`
		Batch int    `json:"batch"`
	}{from, s.subject, lineBatch})
	if err := nc.PublishRequest(api, inbox, req); err != nil {
		return 0, fmt.Errorf("%w: read %s: %w", ErrEngine, s.Name(), err)
	}
	got := 0
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if errors.Is(err, nats.ErrNoResponders) {
			return got, nil // no replica answers for now (one restarting): asked again
		}
		if err != nil {
			return got, fmt.Errorf("%w: read %s: %w", ErrEngine, s.Name(), err)
		}
		switch status := m.Header.Get("Status"); status {
		case "":
		case "204", "404": // the end of the batch, or none
			return got, nil
		default:
			return got, fmt.Errorf("%w: read %s: the server answered %s %s", ErrEngine, s.Name(), status, m.Header.Get("Description"))
		}
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return got, fmt.Errorf("%w: read %s: a line without its sequence", ErrEngine, s.Name())
		}
		got++
		if err := fn(seq, m); err != nil {
			return got, err
		}
	}
}

func (s *journalStore) Torn() []byte { return nil }

// Append keeps line for the next Flush, which stores it after the
// previous one.
func (s *journalStore) Append(line []byte) error {
	if s.err != nil {
		return s.err
	}
	if err := s.lease.check(); err != nil {
		return err
	}
	s.pending = append(s.pending, bytes.Clone(line))
	s.lines++
	return nil
}

// Flush stores the appended lines, one at a time, each expecting the
// subject's last sequence to be the previous line's: a line is stored
// right after the previous one, or not at all (a shared stream's
// sequence moves with every run's writes, so the next expectation is
// known only from the previous line's acknowledgement). A line whose
// acknowledgement did not come within appendTry (the connection left a
// stalled or dead node for another: Connect), or that was refused for
// want of a stream leader or while its first copy was being stored, is
// published again, within opTimeout: a copy of a line already stored is
// refused by its expectation and found stored (storedBefore), so a
// node's stall costs a moment, not the run.
func (s *journalStore) Flush() error {
	if s.err != nil {
		return s.err
	}
	deadline := time.Now().Add(opTimeout)
	stored := s.lines - len(s.pending)
	for i, line := range s.pending {
		n := stored + i + 1
		seq, err := s.store(deadline, n, line)
		if err != nil {
			kind := ErrEngine
			if s.budgetFull(err) {
				kind = ErrBudgetFull // a batch stops on it: no retry makes room
			}
			s.err = fmt.Errorf("%w: append to %s (stream %s): %w%s", kind, s.Name(), s.stream.CachedInfo().Config.Name, err, s.fullHint(err))
			switch {
			case errors.Is(err, jetstream.ErrKeyExists) || isWrongLastSequence(err):
				s.err = fmt.Errorf("%w: %s was written by another coordinator: %w", ErrLeaseTaken, s.Name(), err)
			case errors.Is(err, context.DeadlineExceeded):
				s.err = fmt.Errorf("%w: append to %s: no acknowledgement within %s", ErrEngine, s.Name(), opTimeout)
			}
			s.pending = nil
			return s.err
		}
		s.last = seq
	}
	s.pending = s.pending[:0]
	return s.lease.check()
}

// fullHint says what to do about a full journal: on a run key's own
// stream, that its budget is full and how to free or raise it.
func (s *journalStore) fullHint(err error) string {
	c := s.stream.CachedInfo().Config
	run, _ := strings.CutPrefix(c.Name, RunStreamPrefix)
	if !s.budgetFull(err) {
		return fullHint(err)
	}
	return fmt.Sprintf(" (the journal budget of run key %s, %d bytes, is full: its own journals fill it, no other run's; the engine's operator removes finished ones with maker nats rm, or raises the budget: maker nats run add %s --bytes SIZE, or the engine's default maker nats --run-key-bytes, ProvisionConfig.RunKeyBytes)", run, c.MaxBytes, run)
}

// budgetFull reports whether err is a run key's journal stream refusing
// a line for its budget.
func (s *journalStore) budgetFull(err error) bool {
	return strings.HasPrefix(s.stream.CachedInfo().Config.Name, RunStreamPrefix) && strings.Contains(err.Error(), "maximum bytes exceeded")
}

// store publishes line n until it is stored, by this attempt or an
// earlier one whose acknowledgement was lost, or until deadline, and
// returns its sequence.
func (s *journalStore) store(deadline time.Time, n int, line []byte) (uint64, error) {
	for {
		try := time.Now().Add(appendTry)
		if deadline.Before(try) {
			try = deadline
		}
		ctx, cancel := context.WithDeadline(context.Background(), try)
		msg := nats.NewMsg(s.subject)
		msg.Data = line
		msg.Header.Set(lineHeader, strconv.Itoa(n))
		// No responders (the stream has no leader: a node of a cluster
		// was lost and its replicas elect another) is retried within
		// the try: nothing was stored, so the expectation still holds.
		ack, err := s.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(s.last), jetstream.WithExpectStream(s.stream.CachedInfo().Config.Name), jetstream.WithMsgTTL(s.maxAge),
			jetstream.WithRetryWait(leaderRetryWait), jetstream.WithRetryAttempts(int(appendTry/leaderRetryWait)))
		cancel()
		if err != nil && isWrongLastSequence(err) && !inProcess(err) {
			seq, seen, ok := s.storedBefore(deadline, n, line)
			if ok {
				return seq, nil
			}
			return 0, fmt.Errorf("%w (%s)", err, seen)
		}
		if err == nil {
			return ack.Sequence, nil
		}
		if !retryAppend(err) || !time.Now().Before(deadline) {
			return 0, err
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			time.Sleep(appendPause) // an answer that came at once is not hammered
		}
	}
}

// appendTry is how long Flush waits for a line's acknowledgement before
// it publishes the line again.
const appendTry = 2 * time.Second

// appendPause is how long Flush waits before it publishes again a line
// whose append was refused at once (no stream leader yet, the first copy
// still being stored).
const appendPause = 100 * time.Millisecond

// retryAppend reports whether a line's append may have failed only for
// want of an answer, a server or a stream leader, so that publishing it
// again may land it.
func retryAppend(err error) bool {
	if inProcess(err) {
		return true // the first copy is still being stored: its outcome decides
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// inProcess reports whether err is the leader's refusal of a line while
// an earlier write of the subject (this line's first copy, sent again
// when its acknowledgement was late) is still being stored: a duplicate
// message id in process, or the expectation of the subject's last
// sequence that cannot be checked until it is stored ("wrong last
// sequence" without a sequence, JSErrCodeStreamWrongLastSequenceConstant).
// Neither says the line was refused for good.
func inProcess(err error) bool {
	var je jetstream.JetStreamError
	if !errors.As(err, &je) || je.APIError() == nil {
		return false
	}
	c := je.APIError().ErrorCode
	return c == errCodeDuplicateInProcess || c == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// errCodeDuplicateInProcess is the server's answer to a copy of a message
// whose first copy is still being stored (nats-server's
// JSStreamDuplicateMessageConflict: "duplicate message id is in
// process"); nats.go names no constant for it.
const errCodeDuplicateInProcess jetstream.ErrorCode = 10158

// storedBefore reports whether line n was stored by this writer's earlier
// attempt, whose acknowledgement was lost (a cluster's node died after
// storing it, and the write was sent again): the subject's last message
// is line n with the same bytes, right after the previous line. It
// returns its sequence. The stream's leader refused the expectation
// s.last, so the subject has a line after it: a direct get that answers
// with s.last or before came from a replica that has not caught up, and
// is asked again, until deadline. When it was not, seen says what the
// last get found, for the error.
func (s *journalStore) storedBefore(deadline time.Time, n int, line []byte) (seq uint64, seen string, ok bool) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for {
		m, err := s.stream.GetLastMsgForSubject(ctx, s.subject)
		switch {
		case err != nil:
			seen = fmt.Sprintf("its last line not read: %v", err)
		case m.Header.Get(lineHeader) == strconv.Itoa(n) && bytes.Equal(m.Data, line):
			seen = fmt.Sprintf("its last line is this line %d, at sequence %d", n, m.Sequence)
		default:
			seen = fmt.Sprintf("its last line is line %q at sequence %d, not this line %d after sequence %d", m.Header.Get(lineHeader), m.Sequence, n, s.last)
		}
		if err == nil && m.Sequence > s.last {
			if m.Header.Get(lineHeader) != strconv.Itoa(n) || !bytes.Equal(m.Data, line) {
				return 0, seen, false
			}
			return m.Sequence, "", true
		}
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) && !isTransient(err) {
			return 0, seen, false
		}
		if wait.Sleep(ctx, replicaRetryWait) != nil {
			return 0, seen, false
		}
	}
}

func isWrongLastSequence(err error) bool {
	var je jetstream.JetStreamError
	if errors.As(err, &je) && je.APIError() != nil {
		c := je.APIError().ErrorCode
		return c == jetstream.JSErrCodeStreamWrongLastSequence || c == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}

// Sync is Flush: an acknowledged line is on the server (see CreateJournal
// for a server's power loss).
func (s *journalStore) Sync() error { return s.Flush() }

// Reset starts a journal that never began over: on the engine, where
// lines are atomic, that is a journal with no line, and there is nothing
// to remove. A journal with lines is never removed by its coordinator
// (that takes the admin: maker nats rm).
func (s *journalStore) Reset() error {
	if err := s.Flush(); err != nil {
		return err
	}
	if s.lines > 0 {
		return fmt.Errorf("%w: %s has %d lines and no header: remove it with maker nats rm %s", journal.ErrCorrupt, s.Name(), s.lines, s.run)
	}
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

// Bounds of the lease buckets: a lease is a key and its holder's name,
// so a bucket of leases needs little room, and a bound on its bytes
// keeps one holder of many keys from taking a store's disk.
const (
	// SharedLeaseBytes is the MaxBytes of the shared lease bucket
	// (LeaseBucket), the leases of the shared coordinator's runs and a
	// server without roles: 16 MiB, some 80,000 leases held at once. A
	// full bucket refuses a new lease (ErrEngine naming it) until leases
	// are released or expire (LeaseTTL). Run keys' leases are in buckets
	// of their own (RunLeaseBucket).
	SharedLeaseBytes int64 = 16 << 20
	// MaxOwnerBytes bounds a lease's value, the holder's name
	// (JournalConfig.Owner); the lease buckets' MaxValueSize is that and
	// leaseHeaderBytes for a write's headers.
	MaxOwnerBytes = 1 << 10
	// leaseHeaderBytes is the room of a lease write's headers (its
	// expected revision, a TTL), which the server counts in a message's
	// size.
	leaseHeaderBytes = 512
)

// leaseBucketConfig is the lease bucket's configuration.
func leaseBucketConfig(n int, ttl time.Duration) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:       LeaseBucket,
		Description:  "mdap journal leases: one coordinator per run",
		TTL:          ttl,
		History:      1,
		Storage:      jetstream.FileStorage,
		Replicas:     replicas(n),
		MaxBytes:     SharedLeaseBytes,
		MaxValueSize: MaxOwnerBytes + leaseHeaderBytes,
	}
}

// leaseBucket finds the lease bucket name: the shared one, which it
// creates where the client may (a server without roles; with roles the
// engine provisions it), or a run key's, which the engine's agent makes
// (ErrNotProvisioned when missing).
func leaseBucket(ctx context.Context, js jetstream.JetStream, name string, cfg JournalConfig) (jetstream.KeyValue, time.Duration, error) {
	ttl := cmpOr(cfg.LeaseTTL, DefaultLeaseTTL)
	kv, err := js.KeyValue(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound) && name != LeaseBucket:
		return nil, 0, fmt.Errorf("%w: the lease bucket %s of a run key is missing: run maker nats, or maker nats provision with the admin credential: %w", ErrNotProvisioned, name, err)
	case errors.Is(err, jetstream.ErrBucketNotFound):
		kv, err = js.CreateKeyValue(ctx, leaseBucketConfig(cfg.Replicas, ttl))
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, LeaseBucket)
		}
	}
	if noJetStream(err) {
		return nil, 0, errNoJetStream("lease bucket", err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w: lease bucket %s: %w", ErrEngine, name, err)
	}
	if st, err := kv.Status(ctx); err == nil && st.TTL() > 0 {
		ttl = st.TTL()
	}
	return kv, ttl, nil
}

// acquireLease takes the lease key (a run, or <queue>.<task>) in the
// lease bucket named bucket, waiting up to cfg.WaitLock for a holder to
// release it or die.
func acquireLease(ctx context.Context, js jetstream.JetStream, bucket, run string, cfg JournalConfig) (*lease, error) {
	kv, ttl, err := leaseBucket(ctx, js, bucket, cfg)
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
		rev, err := unlessRefused(ctx, js.Conn(), "$KV."+bucket+"."+run, func(ctx context.Context) (uint64, error) {
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
			if bucket != LeaseBucket {
				r, _, _ := strings.Cut(run, ".")
				return nil, budgetErr(err, fmt.Sprintf("lease of %q", run), r, "the lease bucket "+bucket)
			}
			return nil, fmt.Errorf("%w: lease of %q: %w%s", ErrEngine, run, err, fullHint(err))
		}
		if time.Now().After(deadline) {
			holder := "another coordinator"
			if e, gerr := kv.Get(ctx, run); gerr == nil {
				holder = strconv.Quote(string(e.Value()))
			}
			return nil, fmt.Errorf("%w: %s is held by %s; its lease expires %s after its last refresh if it died: wait, or use another run name",
				journal.ErrLocked, JournalName(run), holder, ttl)
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
		if err != nil && (errors.Is(err, jetstream.ErrKeyExists) || isWrongLastSequence(err)) {
			// An update stored whose acknowledgement was lost (a node of
			// a cluster died), sent again: the key holds this holder's
			// value at the next revision.
			if e, gerr := l.kv.Get(ctx, l.key); gerr == nil && e.Revision() > rev && bytes.Equal(e.Value(), l.owner) {
				next, err = e.Revision(), nil
			}
		}
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
