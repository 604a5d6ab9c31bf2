package cluster

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/internal/wait"
	"github.com/mdap-go/mdap/maker"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/tmc/langchaingo/llms"
)

// DefaultTimeout bounds one sample drawn through the engine, from its job's
// publication to its reply, queueing included, when DrawerConfig.Timeout
// is zero.
const DefaultTimeout = 2 * time.Minute

// DefaultNoWorker is how long a sample waits, when DrawerConfig.NoWorker
// is zero, before its Drawer checks that some worker serves its route.
const DefaultNoWorker = 5 * time.Second

// routeCheckEvery bounds how often a route's consumer is looked up.
const routeCheckEvery = time.Second

// withdrawTimeout bounds the deletion of a withdrawn job.
const withdrawTimeout = 5 * time.Second

// DrawerConfig configures a Drawer.
type DrawerConfig struct {
	// Timeout bounds one sample, queueing included; zero means
	// DefaultTimeout. A job not taken by then expires from the queue; a
	// sample not answered by then fails with ErrNoReply and its job is
	// withdrawn.
	Timeout time.Duration
	// NoWorker is how long a sample waits before the Drawer checks that a
	// worker serves its route (the route's consumer exists, and a worker
	// is pulling from it or holds a job); when none does, the sample
	// fails with ErrNoWorker at once, and so do the route's next samples
	// until a worker appears, instead of waiting out Timeout. 0 means
	// DefaultNoWorker; negative never checks.
	NoWorker time.Duration
	// Gather bounds how long the first call of a wave (vote.WaveFrom)
	// waits for the wave's other calls before their job is published
	// without the late ones (they go in a job of their own); 0 means
	// DefaultGather. A wave's calls start together, so they usually all
	// arrive well within it; it is only waited out by a wave some of
	// whose calls never come here (an ensemble's other members, a
	// limiter holding them back).
	Gather time.Duration
	// Spread makes each sample a job of its own instead of gathering a
	// wave's samples into one, so that the samples of a wave go to
	// several of the route's workers rather than all to the one that
	// takes the job: what vote.Config.MinVoters above 1 needs to decide
	// a step without waiting for more waves. A wave then costs one job,
	// one reply and one acknowledgement per sample. The samples are the
	// same either way: each carries its identity.
	Spread bool
	// Replicas is the replica count of the streams this Drawer creates
	// (JobsStream, RepliesStream) when they do not exist; 0 means 1.
	Replicas int
	// Logger receives debug logs of dropped and duplicate replies; nil
	// means none.
	Logger *slog.Logger
}

// Drawer is the coordinator's side of the engine: it sends sample jobs to
// stateless workers and waits for their replies. Its Models are
// llms.Models, so a maker.Solver draws through the workers exactly as it
// would call a model in process: the race is unchanged.
//
// Each Drawer has its own consumer of RepliesStream (subjects
// mdap.replies.<token>.>), created by NewDrawer and deleted by Close,
// through the engine's agent. Its name is random and known to this
// Drawer and the engine only (the token is a hash of it: replyToken).
// It is safe for concurrent use.
//
// What happens when a part dies:
//   - a worker: its unacknowledged jobs are redelivered to another worker
//     of the route after the route's ack wait; the sample waits that long,
//     then gets the same answer (the job carries the sample's identity);
//   - this coordinator: its jobs still queued expire after Timeout, its
//     consumer after an hour of inactivity, and replies to it after an
//     hour; nothing else is affected;
//   - the server: the connection reconnects; the Drawer then creates the
//     sample streams and its reply consumer again if the server lost them
//     (they live in memory) and asks every job still awaited again (same
//     message id: a duplicate if the server kept it); a publication that
//     fails meanwhile fails its call (ErrEngine) and the race draws it
//     again, within its error budget.
type Drawer struct {
	js       jetstream.JetStream
	nc       *nats.Conn
	jobs     jetstream.Stream
	id       string // its reply consumer's name: a secret (see replyToken)
	token    string // its reply subjects' token: replyToken(id)
	key      string // the publisher token of its jobs' subjects: its key
	timeout  time.Duration
	noWorker time.Duration
	gather   time.Duration
	spread   bool
	log      *slog.Logger
	replicas int
	book     *book                    // who answered what; quarantine
	cc       jetstream.ConsumeContext // under mu
	watching sync.WaitGroup           // watch

	mu      sync.Mutex
	pending map[string]*flight
	byReply map[string]string // a pending job's id by its reply's message id (replyID)
	closed  bool
	done    chan struct{}
	calls   sync.WaitGroup // GenerateContent calls in flight
	bg      sync.WaitGroup // withdrawals

	published, samples, replies, duplicates, withdrawn, deleted, bad, forged, reasked atomic.Int64

	fullMu  sync.Mutex // repliesFull's last look
	fullAt  time.Time
	fullErr error
}

// DrawerStats counts what a Drawer did.
type DrawerStats struct {
	// Published jobs, one per wave (or part of a wave) of a route.
	Published int64
	// Samples the published jobs asked for.
	Samples int64
	// Replies that answered a published job (each answers all of its
	// samples).
	Replies int64
	// Duplicates are replies to no waiting call: a second reply to a job
	// that was redelivered, or a reply that came after its call ended.
	// They count nowhere.
	Duplicates int64
	// Withdrawn jobs: every call of the job ended (the race was decided,
	// the timeout passed) before a reply came. Deleted of them were still queued, so
	// no worker ever drew them.
	Withdrawn, Deleted int64
	// Bad replies did not decode (or answered another number of
	// samples than their job asked). One bearing a waiting job's lease,
	// so from the worker holding the job, fails the job's calls at once
	// with ErrUndecodable naming the worker; any other is dropped.
	Bad int64
	// Forged replies named a waiting job without its lease key: they did
	// not come from the worker the job was delivered to. Dropped; the
	// call still waits for the reply of the worker holding the job.
	Forged int64
	// Reasked jobs were published again after a reconnection found them
	// lost (the server restarted: jobs and replies are kept in memory).
	// A job counts when the server acknowledges it, which may be after
	// its reply has come and its call returned.
	Reasked int64
}

// NewDrawer creates the sample streams if they do not exist, and this
// drawer's reply consumer. Close it when done; the connection stays the
// caller's. Errors wrap ErrEngine, or ErrVersion for an engine of
// another protocol (EngineProtocol). An engine that does not answer for a
// while (a cluster electing leaders after a node's restart) is asked
// again for about 30 s within ctx.
func NewDrawer(ctx context.Context, js jetstream.JetStream, cfg DrawerConfig) (*Drawer, error) {
	jobs, err := retryPassing(ctx, setupAttempt, func(ctx context.Context) (jetstream.Stream, error) {
		return ensureSampleStreams(ctx, js, cfg.Replicas)
	})
	if err != nil {
		return nil, err
	}
	if err := checkProtocol(jobs.CachedInfo(), "coordinator"); err != nil {
		return nil, err
	}
	id := newDrawerID()
	d := &Drawer{
		js: js, nc: js.Conn(), jobs: jobs, id: id, token: replyToken(id),
		key:     jobKey(js.Conn().Opts.InboxPrefix),
		timeout: cmpOr(cfg.Timeout, DefaultTimeout), noWorker: cmpOr(cfg.NoWorker, DefaultNoWorker),
		gather: cmpOr(cfg.Gather, DefaultGather), spread: cfg.Spread,
		log:     cfg.Logger,
		pending: map[string]*flight{}, byReply: map[string]string{},
		done: make(chan struct{}),
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.book = newBook(d.log)
	d.replicas = cfg.Replicas
	if _, err := retryPassing(ctx, setupAttempt, func(ctx context.Context) (struct{}, error) { return struct{}{}, d.consumeReplies(ctx) }); err != nil {
		return nil, err
	}
	d.watching.Go(d.watch)
	return d, nil
}

// jobKey is the key a Drawer's job subjects name (mdap.jobs.<route>.<key>)
// for a connection whose inbox prefix is inbox: its signed key (a client
// signed in with Credentials), the only one a server with roles lets it
// publish under, so the engine bounds the jobs of each key
// (ProvisionConfig.KeyJobs). Without one (a server without roles, or
// with a token) nothing binds a key and every coordinator's connection
// has the same name, so each Drawer is a key of its own: one
// coordinator's jobs do not count against another's bound.
func jobKey(inbox string) string {
	if key, ok := strings.CutPrefix(inbox, "_INBOX_"); ok {
		if key, _, _ = strings.Cut(key, "."); key != "" {
			return key
		}
	}
	return "d" + nuid.Next()
}

// leaseKey is a job's lease key: 128 random bits.
func leaseKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Model returns the llms.Model that draws samples from the workers
// serving route: the identity of the model they run (see Worker), such as
// the simulated model's Identity or a spec like "openai:gpt-4o-mini". Its
// Identity is route, so a journal written through the engine records the
// same model as one written in process, and a run may be resumed either
// way. Errors wrap ErrConfig for an empty route.
func (d *Drawer) Model(route string, opts ...ModelOption) (*Model, error) {
	if route == "" {
		return nil, fmt.Errorf("%w: empty route: name the model the workers serve", ErrConfig)
	}
	token := RouteToken(route)
	m := &Model{d: d, route: route, token: token, subject: jobsSubject + token + "." + d.key}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// ModelOption configures a Model of Drawer.Model.
type ModelOption func(*Model)

// WithNativeTools says whether the workers' model takes tool definitions
// natively (an OpenAI-compatible or Anthropic model does): the Model then
// reports it through NativeTools, so that a run's automatic tool
// declaration (maker.DeclareAuto) is the one the same model gets in
// process. Without it a Model reports false, and tools go in the prompt,
// which every model reads. The definitions travel with each job either way.
func WithNativeTools(native bool) ModelOption {
	return func(m *Model) { m.native = native }
}

// NativeTools implements maker.NativeToolModel, as WithNativeTools set it.
func (m *Model) NativeTools() bool { return m.native }

// Served reports whether any worker ever served route on this engine (its
// route's consumer exists): a coordinator that finds none can say that its
// samples will wait for a worker. Errors wrap ErrEngine.
func (d *Drawer) Served(ctx context.Context, route string) (bool, error) {
	_, err := d.js.Consumer(ctx, JobsStream, workerConsumer(RouteToken(route)))
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%w: the consumer of route %q: %w", ErrEngine, route, err)
	}
	return true, nil
}

// Stats returns what the drawer has done so far.
func (d *Drawer) Stats() DrawerStats {
	return DrawerStats{
		Published: d.published.Load(), Samples: d.samples.Load(), Replies: d.replies.Load(), Duplicates: d.duplicates.Load(),
		Withdrawn: d.withdrawn.Load(), Deleted: d.deleted.Load(), Bad: d.bad.Load(), Forged: d.forged.Load(), Reasked: d.reasked.Load(),
	}
}

// Queued is the number of jobs the drawer published that were neither
// answered nor withdrawn, for a queue gauge (observe.Watcher.ObserveQueue);
// always known (true).
func (d *Drawer) Queued(context.Context) (int64, bool) {
	st := d.Stats()
	return st.Published - st.Replies - st.Withdrawn, true
}

// Close fails the calls in flight with ErrClosed (withdrawing their
// jobs), waits for the withdrawals, stops consuming replies and deletes
// the reply consumer. It is safe to call more than once; the connection
// stays open.
func (d *Drawer) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	close(d.done)
	d.mu.Unlock()
	d.calls.Wait()
	d.bg.Wait()
	d.watching.Wait()
	d.mu.Lock()
	cc := d.cc
	d.mu.Unlock()
	cc.Stop()
	<-cc.Closed()
	ctx, cancel := context.WithTimeout(context.Background(), withdrawTimeout)
	defer cancel()
	// The engine's agent deletes it (no coordinator may), and stops
	// taking its replies; on a server without one, the Drawer does.
	err := askAgent(ctx, d.nc, "replies."+replyIdentity(d.nc.Opts.InboxPrefix, ""), agentRequest{Name: d.id, Drop: true})
	if errors.Is(err, errNoAgent) {
		err = dropDrawer(ctx, d.js, d.id, &replySpace{})
	}
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("%w: delete the reply consumer: %w", ErrEngine, err)
	}
	return nil
}

// onReply hands each sample of a reply to its waiting call, once.
func (d *Drawer) onReply(msg jetstream.Msg) {
	defer func() { _ = msg.Ack() }()
	if key, ok := strings.CutPrefix(voterOf(msg.Subject()), noticeMark); ok {
		d.onNotice(msg.Data(), key)
		return
	}
	r, err := decodeReply(msg.Data())
	misbehaved := "" // why the sender is quarantined, when it is
	if err != nil {
		// One that names a waiting job and bears its lease, or one stored
		// under a waiting job's reply id, comes from a worker that held
		// the job: its calls fail now, not at their timeout. Any other is
		// dropped.
		var head unansweredReply
		_ = json.Unmarshal(msg.Data(), &head) // a body naming no job names none here
		if head.Unanswered {
			// The agent's stand-in (ackcheck.go), or the worker's own
			// word: either way no reply of its will come.
			err = fmt.Errorf("%w: its worker acknowledged or terminated the job without a reply", ErrUndecodable)
			if head.Acked {
				misbehaved = "it acknowledged a job with no reply stored"
			}
		}
		r = Reply{ID: head.ID, Lease: head.Lease, Worker: head.Worker}
		if head.Unanswered {
			// The stand-in names no one but its sender (review15).
			r.Worker = voterOf(msg.Subject())
		}
	}
	d.mu.Lock()
	f, ok := d.pending[r.ID]
	forged := ok && subtle.ConstantTimeCompare([]byte(f.lease), []byte(r.Lease)) != 1
	if id, held := d.byReply[replyIDOf(msg.Headers().Get(jetstream.MsgIDHeader))]; (!ok || forged || r.ID != id) && held {
		// Stored under a waiting job's reply id, which only a worker
		// that held the job knows, and not its reply: under the
		// holder's own message id, the stream drops the holder's reply
		// as a duplicate of it, so the job's calls fail now, not at
		// their timeout (review14), and no honest worker does it.
		r, f, ok, forged = Reply{ID: id, Worker: voterOf(msg.Subject())}, d.pending[id], true, false
		err = fmt.Errorf("%w: a message stored under the job's reply id is not its reply", ErrUndecodable)
		misbehaved = "it stored something other than a job's reply under the job's reply id"
	}
	short := ok && !forged && err == nil && len(r.Samples) != len(f.calls)
	if ok && !forged {
		d.forget(f)
	}
	d.mu.Unlock()
	// Named by the identity its sender's permissions bind to the
	// subject, not by the name in a body its sender chose (review15,
	// review17); by that name only without roles (no identity).
	who := cmpOr(voterOf(msg.Subject()), r.Worker)
	switch {
	case forged:
		d.forged.Add(1)
		d.log.Warn("reply without its job's lease dropped (not from the worker holding the job)", "job", r.ID, "worker", who)
		return
	case ok && (err != nil || short):
		if short {
			err = fmt.Errorf("%w: reply %s answers %d samples, its job asked %d", ErrUndecodable, r.ID, len(r.Samples), len(f.calls))
		}
		d.bad.Add(1)
		d.log.Warn("undecodable reply from the worker holding the job: its samples fail", "job", r.ID, "worker", who, "err", err)
		if misbehaved != "" {
			d.book.misbehaved(voterOf(msg.Subject()), r.Worker, misbehaved)
		}
		failed := fmt.Errorf("%w (worker %q, route %s)", err, who, f.m.route)
		for _, c := range f.calls {
			c.ch <- answer{worker: who, err: failed} // buffered; the only send, since the job is gone
		}
		return
	case err != nil:
		d.bad.Add(1)
		d.log.Debug("bad reply dropped", "subject", msg.Subject(), "err", err)
		return
	case !ok:
		d.duplicates.Add(1)
		d.log.Debug("reply to no waiting call", "job", r.ID, "worker", r.Worker)
		return
	}
	d.replies.Add(1)
	f.m.alive()
	voter := voterOf(msg.Subject())
	out := d.book.quarantined(voter)
	for i, c := range f.calls {
		a := answer{r: r.Samples[i], worker: r.Worker, voter: voter}
		if out {
			a.r = sampleReplyOf(nil, errQuarantined(voter), a.r.Took)
		} else if !c.sample.Anon {
			d.book.answered(c.sample.Step, voter, r.Worker)
		}
		c.ch <- a // buffered; the only send, since the job is gone
	}
}

// onNotice fails at once the calls of a job whose worker (key) acted on
// it, by the engine's notice (ackcheck.go), while it still waits for its
// reply: the replies stored before the notice were read before it, so
// none is coming. A worker that acknowledged the job with nothing stored
// under its reply id is quarantined, as no honest worker does that.
func (d *Drawer) onNotice(data []byte, key string) {
	var n actNotice
	if json.Unmarshal(data, &n) != nil {
		return
	}
	d.mu.Lock()
	f, ok := d.pending[n.ID]
	if !ok || subtle.ConstantTimeCompare([]byte(f.lease), []byte(n.Lease)) != 1 {
		d.mu.Unlock()
		return // answered, withdrawn, or not this Drawer's
	}
	d.forget(f)
	d.mu.Unlock()
	d.bad.Add(1)
	why := "its worker terminated the job and no reply of it reached its Drawer"
	switch n.Act {
	case "ack":
		why = "its worker acknowledged the job and no reply of it reached its Drawer"
	}
	d.log.Warn("a job's samples fail: "+why, "job", n.ID, "worker", key)
	failed := fmt.Errorf("%w: %s (worker %q, route %s)", ErrUndecodable, why, key, f.m.route)
	for _, c := range f.calls {
		c.ch <- answer{worker: key, err: failed} // buffered; the only send, since the job is gone
	}
	if n.Act == "ack" && n.Unanswered {
		d.book.misbehaved(key, "", "it acknowledged a job with no reply stored")
	}
}

// replyID is the reply id of job f: its lease, a secret only a worker
// the job was delivered to reads (its id without one, on a server
// without roles). A reply's message id begins with it (replyMsgID).
func (f *flight) replyID() string { return cmpOr(f.lease, f.id) }

// replyMsgID is the message id a worker stores its reply to a job (lease,
// id) under: the job's reply id, then, for a job delivered through the
// agent, replyMark and the delivery's handle, a secret of the worker it
// was delivered to (the agent makes a new one at each delivery). So no
// worker that held the job before can take the id the next holder's
// reply is stored under, in the stream's duplicate table, which is the
// stream's and not a subject's: before (protocol 2, the lease alone),
// one storing anything under the lease, anywhere in the stream, before
// or after handing the job back or letting its ack wait pass, had the
// next holder's reply dropped as a duplicate, and the job's failure name
// that honest worker (CI on 1040766; review16).
func replyMsgID(lease, id, handle string) string {
	if handle == "" {
		return cmpOr(lease, id)
	}
	return cmpOr(lease, id) + replyMark + handle
}

// replyMark parts a reply's message id from its delivery's handle; no
// lease (hex) or job id (a NUID) holds it.
const replyMark = "~"

// replyIDOf is the job's reply id a reply's message id begins with.
func replyIDOf(msgID string) string {
	id, _, _ := strings.Cut(msgID, replyMark)
	return id
}

// wait records f as pending its reply. The caller holds d.mu.
func (d *Drawer) wait(f *flight) {
	d.pending[f.id] = f
	d.byReply[f.replyID()] = f.id
}

// forget records that f no longer waits for its reply. The caller holds
// d.mu.
func (d *Drawer) forget(f *flight) {
	delete(d.pending, f.id)
	delete(d.byReply, f.replyID())
}

// withdraw takes back a job whose call ended without a reply: a notice
// for a worker that took it (it stops the model call; through the
// engine's agent, once the agent confirms: Worker.onCancel), and the deletion
// of the job from the queue if no worker took it yet. On a server with
// roles the engine deletes it (mdap.engine.withdraw), only for the holder
// of the job's lease, so no coordinator can delete another's jobs;
// without an agent the Drawer deletes it itself.
func (d *Drawer) withdraw(token, id, lease string, seq uint64) {
	d.withdrawn.Add(1)
	d.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), withdrawTimeout)
		defer cancel()
		err := askOwn(ctx, d.nc, "withdraw", agentRequest{Name: id, Seq: seq, Lease: lease})
		// The notice after the agent's record: a worker asks the agent
		// whether a job it holds through it was withdrawn (onCancel).
		// Best effort: a lost notice costs one model call.
		_ = d.nc.Publish(cancelSubject+token+"."+id, nil)
		if errors.Is(err, errNoAgent) {
			err = d.jobStream().DeleteMsg(ctx, seq)
		} else if err != nil && strings.Contains(err.Error(), errJobGone) {
			err = jetstream.ErrMsgNotFound
		}
		if err == nil {
			d.deleted.Add(1)
		} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
			d.log.Debug("withdraw", "job", id, "err", err)
		}
	})
}

// Model is an llms.Model whose calls are drawn by the workers of one
// route (see Drawer.Model). Safe for concurrent use.
type Model struct {
	d       *Drawer
	route   string
	token   string
	subject string
	native  bool // the workers' model takes native tools (WithNativeTools)

	mu        sync.Mutex
	lastAlive time.Time // the last reply, or the last check that found a worker
	lastCheck time.Time
	noWorker  bool // the last check found none

	wmu   sync.Mutex
	waves map[waveKey]*gather // waves gathering their calls
}

// alive records a sign of a worker of the route.
func (m *Model) alive() {
	m.mu.Lock()
	m.lastAlive, m.noWorker = time.Now(), false
	m.mu.Unlock()
}

// served returns ErrNoWorker when no worker serves the route: from the
// last check if it is recent (or, with cached, whatever its age, unless a
// worker showed up since), else from the route's consumer. It is nil when
// a worker replied within NoWorker, and whenever the engine cannot say.
func (m *Model) served(ctx context.Context, recheck bool) error {
	d := m.d
	if d.noWorker < 0 {
		return nil
	}
	m.mu.Lock()
	now := time.Now()
	switch {
	case now.Sub(m.lastAlive) < d.noWorker:
		m.mu.Unlock()
		return nil
	case now.Sub(m.lastCheck) < routeCheckEvery || (!recheck && !m.noWorker):
		none := m.noWorker
		m.mu.Unlock()
		if none {
			return m.errNoWorker()
		}
		return nil
	}
	m.lastCheck = now
	m.mu.Unlock()
	// Twice, a little apart: a worker between two pulls has no pull
	// waiting for an instant.
	none := true
	for i := 0; i < 2 && none; i++ {
		if i > 0 {
			_ = wait.Sleep(ctx, routeCheckEvery/4)
		}
		cctx, cancel := context.WithTimeout(ctx, routeCheckEvery)
		info, err := d.js.Consumer(cctx, JobsStream, workerConsumer(m.token))
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound):
		case err != nil:
			return nil // the engine cannot say: the Timeout decides
		default:
			ci := info.CachedInfo()
			// A job pending its acknowledgement is a worker's only while
			// that worker lives: a dead worker's job, waiting for a
			// redelivery no worker takes, stays pending too.
			none = ci.NumWaiting == 0 && (ci.NumAckPending == 0 || !m.workerListening(ctx))
		}
	}
	m.mu.Lock()
	m.noWorker = none
	if !none {
		m.lastAlive = time.Now()
	}
	m.mu.Unlock()
	if none {
		return m.errNoWorker()
	}
	return nil
}

// probeID is the job id of the notice workerListening sends: no job has
// it (a job id is a NUID), so a worker that receives it cancels nothing.
const probeID = "probe"

// workerListening reports whether a client listens to the route's
// cancellation notices, as every worker of the route does from its start
// to its end on its connection: a request that nobody listens to is
// answered at once "no responders" by the server. It is false only on
// that answer (a dead worker's connection is gone; one stopped with
// SIGSTOP still listens until the server drops it); true when nothing
// answered within routeCheckEvery/2, as a worker never answers.
func (m *Model) workerListening(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, routeCheckEvery/2)
	defer cancel()
	_, err := m.d.nc.RequestWithContext(cctx, cancelSubject+m.token+"."+probeID, nil)
	return !errors.Is(err, nats.ErrNoResponders)
}

func (m *Model) errNoWorker() error {
	return fmt.Errorf("%w: no worker serves %s on the engine (none is pulling jobs or holds one): start maker worker with the same model", ErrNoWorker, m.route)
}

var (
	_ llms.Model        = (*Model)(nil)
	_ maker.Identifier  = (*Model)(nil)
	_ maker.RemoteModel = (*Model)(nil)
)

// Identity is the route: the identity of the model the workers run.
func (m *Model) Identity() string { return m.route }

// DrawsRemotely reports true: workers make the provider calls and report
// them (maker.RemoteModel), so the coordinator's observer counts none of
// their tokens.
func (m *Model) DrawsRemotely() bool { return true }

// Route returns the route; RouteToken(Route()) is its subject token.
func (m *Model) Route() string { return m.route }

// Call implements llms.Model's single-prompt method.
func (m *Model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}
