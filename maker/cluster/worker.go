package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/wait"
	"github.com/mdap-go/mdap/maker"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tmc/langchaingo/llms"
)

// Defaults of a WorkerConfig.
const (
	// DefaultAckWait is how long a job may go without word from its worker
	// before the engine redelivers it to another: a worker that dies loses
	// its jobs for at most that long. A live worker reports progress every
	// third of it, however long its model call takes.
	DefaultAckWait = 10 * time.Second
	// DefaultGrace is how long a stopping worker lets its model calls
	// finish before it hands their jobs back.
	DefaultGrace = 10 * time.Second
	// DefaultMaxDeliver is how many times a job is delivered at most; a
	// job that kept killing its workers is then left to expire.
	DefaultMaxDeliver = 10
)

const (
	pollWait       = time.Second      // one pull request's wait for jobs
	publishTimeout = 10 * time.Second // an act sent to the agent (askAgent)
	noStreamWait   = 5 * time.Second  // a reply finding no stream tries again this long past the agent last saying its Drawer lives (publishReply)
	backoff        = 500 * time.Millisecond
)

// publishTry bounds one try to store a message (a reply, a job): a
// stream's leader that stopped answering (its node paused, or cut
// off before the cluster elected another) holds a try that waits on
// it, while one sent again after it reaches the leader elected in its
// place. The message ID makes another try safe: the stream acknowledges
// a copy of a message it stored within dedupeWindow rather than storing
// it again.
const publishTry = 2 * time.Second

// errWithdrawn is the cause of a model call whose job was withdrawn.
var errWithdrawn = errors.New("job withdrawn by its coordinator")

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	// Route is the queue the worker serves; empty means the model's
	// identity (maker.ModelIdentity), which is what a coordinator's
	// Drawer.Model names. Workers of one route must run the same model:
	// any of them may draw any sample.
	Route string
	// Name names the worker in replies and logs; empty means host/pid.
	Name string `flag:"name" usage:"the worker's name in replies (default host/pid)"`
	// Inflight bounds the model calls in progress at once, and the jobs
	// (waves) this worker holds; 0 means 1, at most MaxInflight. The
	// worker pulls jobs with one request for all its free places.
	Inflight int `flag:"inflight" usage:"most model calls in progress at once"`
	// AckWait is the route consumer's ack wait, shared by every worker of
	// the route (the last one started sets it); 0 means DefaultAckWait.
	// On a server whose engine provisions the consumers (a server with
	// roles) the engine's applies instead (see Worker.AckWait).
	AckWait time.Duration `flag:"ack-wait" usage:"how long a job of a dead worker waits before another worker takes it (shared by the workers of a model: the last started sets it); on maker nats, or a server provisioned by maker nats provision, the engine's --ack-wait applies instead"`
	// MaxDeliver bounds a job's deliveries; 0 means DefaultMaxDeliver. The
	// engine's applies on a server with roles, as for AckWait.
	MaxDeliver int
	// Grace is how long Run lets model calls finish once its context
	// ends; 0 means DefaultGrace. Calls still running then are cancelled
	// and their jobs handed back for immediate redelivery.
	Grace time.Duration `flag:"grace" usage:"on SIGINT/SIGTERM, how long model calls in progress may finish"`
	// Replicas is the replica count of the streams the worker creates if
	// they do not exist; 0 means 1.
	Replicas int
	// URL is the engine OpenWorker dials (CheckURL); Creds what it signs
	// in with (its Identity a worker's name). NewWorker, given a
	// connection, reads neither.
	URL   string      `flag:"nats" usage:"NATS URL to take jobs from, e.g. nats://127.0.0.1:4222"`
	Creds ClientCreds `flags:"Creds."`
	// Logger receives logs of failed publications and bad jobs (Warn),
	// each redelivered job the worker takes (Info), and each job's start
	// and end (Debug); nil means none.
	Logger *slog.Logger
}

// MaxInflight bounds WorkerConfig.Inflight.
const MaxInflight = 4096

// Validate reports the first field out of range as a *fielderr.Error
// (maker.FieldError) wrapping ErrConfig, naming the field
// ("cluster.WorkerConfig: Inflight = 5000: use 1 to 4096"), so that a
// caller maps it back to its own setting. Zero is every number's
// default; a negative value, or one out of its range, is refused; so are
// a URL no client could dial and an identity no worker may have.
func (c WorkerConfig) Validate() error {
	const cfg = "cluster.WorkerConfig"
	switch {
	case c.Inflight < 0 || c.Inflight > MaxInflight:
		return fielderr.New(cfg, "Inflight", c.Inflight, fmt.Sprintf("use 1 to %d", MaxInflight))
	case c.AckWait < 0 || c.AckWait > 0 && c.AckWait < time.Second:
		return fielderr.New(cfg, "AckWait", c.AckWait, "use at least 1s")
	case c.MaxDeliver < 0:
		return fielderr.New(cfg, "MaxDeliver", c.MaxDeliver, "use a positive count (at least 2, so that a dead worker's jobs come back)")
	case c.Grace < 0:
		return fielderr.New(cfg, "Grace", c.Grace, "use 0 or a positive duration")
	case c.Replicas < 0 || c.Replicas > 5:
		return fielderr.New(cfg, "Replicas", c.Replicas, "use 1 to 5 (the nodes of the cluster that keep a copy)")
	case c.URL != "" && CheckURL(c.URL) != nil:
		return fielderr.New(cfg, "URL", c.URL, "want nats://HOST:PORT (several separated by commas), as printed by maker nats")
	case c.Creds.Identity != "" && CheckWorkerName(c.Creds.Identity) != nil:
		return fielderr.New(cfg, "Creds.Identity", c.Creds.Identity, "a worker identity is named 1 to 64 letters, digits, '-' or '_' (maker nats worker ls lists them)")
	}
	return nil
}

// Worker is a stateless sample worker: it pulls jobs from its route's
// queue (a durable pull consumer of JobsStream shared by every worker of
// the route), calls its model with the job's messages, options and sample
// identity (maker.WithSampleID), publishes the reply on RepliesStream and
// then acknowledges the job. Any number of workers, on any machines, may
// join and leave at any time.
//
// What happens when a part dies:
//   - this worker: the jobs it holds are redelivered to another worker of
//     the route once their ack wait passes without a progress report; a
//     reply it published before dying is kept once (message-id
//     deduplication), and a second reply counts once at the coordinator;
//   - a coordinator: its jobs still queued expire; a job the worker is
//     drawing is answered to nobody (the reply expires after an hour);
//   - the server: the connection reconnects and the worker carries on;
//     a reply that cannot be published hands its job back (redelivered).
type Worker struct {
	js       jetstream.JetStream
	nc       *nats.Conn
	model    llms.Model
	cons     jetstream.Consumer
	route    string
	token    string
	name     string
	inflight int
	// ackWait is the route consumer's ack wait, as last found (the
	// engine's, on a server with an agent), in nanoseconds.
	ackWait  atomic.Int64
	grace    time.Duration
	log      *slog.Logger
	ccfg     jetstream.ConsumerConfig
	replicas int
	running  atomic.Bool
	// reconnects is the connection's reconnection count when the route's
	// consumer was last ensured.
	reconnects atomic.Uint64
	slots      chan struct{} // one per model call in progress (Inflight)
	// viaAgent: the engine's agent made the route's consumer, so jobs are
	// pulled and acknowledged through it, on workPrefix (a server with
	// roles).
	viaAgent   atomic.Bool
	workPrefix string
	// identity is the last token of its replies' subjects: its
	// credential's key (see ReplyPermission).
	identity string
	// owned: OpenWorker dialled nc, and Close closes it.
	owned bool

	mu        sync.Mutex
	active    map[string]activeJob
	withdrawn map[string]time.Time   // notices for jobs not taken yet
	stalled   map[string]time.Time   // Drawers not reading: until when (notReading)
	taken     map[string]time.Time   // Drawers: when one of this worker's replies last found room (roomTaken)
	parked    map[string][]time.Time // coordinator identities: since when each of their replies waits for room (park)
	parkedN   int                    // every key's parked replies
	lines     map[string]*replyLine  // Drawers: the order of this worker's replies waiting for room (queue)

	served, failed, withdrawnN, released, redelivered, bad atomic.Int64
}

// WorkerStats counts what a Worker did.
type WorkerStats struct {
	// Served samples: their job's reply was published and the job
	// acknowledged; Failed of them carried the model's error.
	Served, Failed int64
	// Withdrawn jobs: their coordinator no longer needed them.
	Withdrawn int64
	// Released jobs were handed back unanswered, for redelivery: the
	// worker was stopping, its reply could not be published, or its
	// Drawer was not taking this worker's replies (see notReading).
	Released int64
	// Redelivered jobs this worker took had been delivered before (to a
	// worker that died, or released them).
	Redelivered int64
	// Bad jobs did not decode and were terminated.
	Bad int64
}

// NewWorker gets the route's consumer: from the engine's agent where
// there is one (a server with roles: the engine's settings apply), else
// by creating it and the sample streams if they do not exist (or updating
// it to this worker's AckWait and MaxDeliver). Run starts the work. Errors wrap ErrConfig (a nil model;
// cfg.Validate's *fielderr.Error), ErrVersion (an engine of another
// protocol, EngineProtocol) or ErrEngine.
func NewWorker(ctx context.Context, js jetstream.JetStream, model llms.Model, cfg WorkerConfig) (*Worker, error) {
	if model == nil {
		return nil, fmt.Errorf("%w: the worker has no model", ErrConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Worker{
		js: js, nc: js.Conn(), model: model,
		route:     cmpOr(cfg.Route, maker.ModelIdentity(model)),
		name:      cfg.Name,
		inflight:  cmpOr(cfg.Inflight, 1),
		grace:     cmpOr(cfg.Grace, DefaultGrace),
		log:       cfg.Logger,
		active:    map[string]activeJob{},
		withdrawn: map[string]time.Time{},
		stalled:   map[string]time.Time{},
		taken:     map[string]time.Time{},
		parked:    map[string][]time.Time{},
		lines:     map[string]*replyLine{},
	}
	w.slots = make(chan struct{}, w.inflight)
	if w.name == "" {
		host, _ := os.Hostname()
		w.name = host + "/" + strconv.Itoa(os.Getpid())
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.token = RouteToken(w.route)
	w.workPrefix = workSubject + workerIdentity(w.nc.Opts.InboxPrefix) + "."
	w.identity = replyIdentity(w.nc.Opts.InboxPrefix, w.name)
	w.replicas = cfg.Replicas
	w.ccfg = routeConsumerConfig(w.token, w.route, cfg.AckWait, cfg.MaxDeliver)
	w.ackWait.Store(int64(w.ccfg.AckWait))
	if err := checkEngineProtocol(ctx, w.js, "worker"); err != nil {
		return nil, err
	}
	if err := w.ensureConsumer(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// selfCreateTimeout bounds a worker's own creation of its route's
// consumer where no agent answers: a server with roles refuses it without
// a word, so the request would wait out its context.
const selfCreateTimeout = 10 * time.Second

// ensureConsumer finds the route's consumer: made by the engine's agent
// with the engine's settings when there is one (a server with roles),
// else created (or updated) with this worker's settings.
func (w *Worker) ensureConsumer(ctx context.Context) error {
	var cons jetstream.Consumer
	// The request names this worker's identity, as its permissions
	// require: the engine counts the routes each identity adds. A server
	// whose authorization block predates it refuses the subject without
	// an answer: seen at once (unlessRefused), not after agentTimeout.
	kind := "route." + replyIdentity(w.nc.Opts.InboxPrefix, w.name)
	_, err := unlessRefused(ctx, w.nc, agentSubject+kind, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, askAgent(ctx, w.nc, kind, agentRequest{Route: w.route})
	})
	switch {
	case errors.Is(err, ErrAuth):
		return fmt.Errorf("%w (the server's accounts block is older than this worker, which asks for its route on %s<its key>: write the block again with maker nats config, or cluster.StockAuthConfig, and reload the server)", err, agentSubject+"route.")
	case err == nil:
		cons, err = w.js.Consumer(ctx, JobsStream, w.ccfg.Durable)
		w.viaAgent.Store(err == nil)
	case errors.Is(err, errNoAgent):
		cons, err = w.createConsumer(ctx)
		w.viaAgent.Store(false)
	}
	if errors.Is(err, ErrNoJetStream) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: the consumer of route %q: %w", ErrEngine, w.route, err)
	}
	if aw := cons.CachedInfo().Config.AckWait; aw > 0 {
		w.ackWait.Store(int64(aw))
	}
	w.mu.Lock()
	w.cons = cons
	w.mu.Unlock()
	return nil
}

// createConsumer creates or updates the route's consumer with this
// worker's settings; where the worker may not (a stock server with roles
// and no agent), it uses the one the operator provisioned.
func (w *Worker) createConsumer(ctx context.Context) (jetstream.Consumer, error) {
	cctx, cancel := context.WithTimeout(ctx, selfCreateTimeout)
	defer cancel()
	cons, err := w.js.CreateOrUpdateConsumer(cctx, JobsStream, w.ccfg)
	if errors.Is(err, jetstream.ErrStreamNotFound) { // the server restarted: jobs live in memory
		if _, err = ensureSampleStreams(cctx, w.js, w.replicas); err == nil {
			cons, err = w.js.CreateOrUpdateConsumer(cctx, JobsStream, w.ccfg)
		}
	}
	if err == nil {
		return cons, nil
	}
	if noJetStream(err) {
		return nil, errNoJetStream("the consumer of route "+w.route, err)
	}
	if c, lerr := w.js.Consumer(ctx, JobsStream, w.ccfg.Durable); lerr == nil {
		return c, nil
	}
	return nil, fmt.Errorf("%w: %w (on a server with roles the engine makes it: run maker nats, or maker nats provision with the admin credential)", ErrNotProvisioned, err)
}

func (w *Worker) consumer() jetstream.Consumer {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cons
}

// AckWait returns the ack wait of the route's consumer as last found: the
// engine's on a server that provisions its consumers (WorkerConfig.AckWait
// is then only asked for, not applied), else this worker's.
func (w *Worker) AckWait() time.Duration { return time.Duration(w.ackWait.Load()) }

// Route returns the route the worker serves.
func (w *Worker) Route() string { return w.route }

// Stats returns what the worker has done so far.
func (w *Worker) Stats() WorkerStats {
	return WorkerStats{
		Served: w.served.Load(), Failed: w.failed.Load(), Withdrawn: w.withdrawnN.Load(),
		Released: w.released.Load(), Redelivered: w.redelivered.Load(), Bad: w.bad.Load(),
	}
}

// Run serves jobs until ctx ends, then stops taking jobs, lets the model
// calls in progress finish within Grace (their replies are published),
// hands back the jobs of calls still running after that, and returns nil.
// Engine errors while serving (the server is restarting) are retried
// every half second; they do not end Run. Errors: ErrEngine when the
// cancellation notices cannot be subscribed to; ErrConfig when Run is
// called twice.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: Run called twice on one Worker", ErrConfig)
	}
	sub, err := w.nc.Subscribe(cancelSubject+w.token+".*", w.onCancel)
	if err != nil {
		return fmt.Errorf("%w: subscribe to cancellation notices: %w", ErrEngine, err)
	}
	defer func() { _ = sub.Unsubscribe() }()

	// Model calls outlive ctx by up to Grace.
	calls, kill := context.WithCancel(context.WithoutCancel(ctx))
	defer kill()
	// Pull requests cover exactly the free places (Inflight jobs held
	// at most): one Fetch(n) for the n places free now, another as soon
	// as more free up, so a job never waits in the queue while this
	// worker has room, and never waits in this worker for room.
	var (
		mu    sync.Mutex
		free  = w.inflight
		woken = make(chan struct{}, 1)
	)
	giveBack := func(n int) {
		if n == 0 {
			return
		}
		mu.Lock()
		free += n
		mu.Unlock()
		select {
		case woken <- struct{}{}:
		default:
		}
	}
	var fetches, jobs sync.WaitGroup
	for ctx.Err() == nil {
		mu.Lock()
		n := free
		if w.viaAgent.Load() {
			n = min(n, maxPull) // the agent's bound on one pull; the rest in the next
		}
		free -= n
		mu.Unlock()
		if n == 0 {
			select {
			case <-woken:
			case <-ctx.Done():
			}
			continue
		}
		fetches.Go(func() { w.fetch(ctx, calls, n, giveBack, &jobs) })
	}
	finished := make(chan struct{})
	go func() { fetches.Wait(); jobs.Wait(); close(finished) }()
	t := time.NewTimer(w.grace)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
		kill()
		<-finished
	}
	return nil
}

// fetch pulls up to n jobs in one request and draws each on its own
// goroutine (in jobs), with calls as the model calls' parent context;
// every place, used or not, is given back once free.
func (w *Worker) fetch(ctx, calls context.Context, n int, giveBack func(int), jobs *sync.WaitGroup) {
	got := 0
	if r := w.nc.Stats().Reconnects; r != w.reconnects.Load() {
		// The server may have restarted: jobs live in memory, so the
		// route's consumer (and the streams) may be gone.
		if err := w.ensureConsumer(ctx); err != nil {
			w.log.Debug("the route's consumer after a reconnection", "route", w.route, "err", err)
			_ = wait.Sleep(ctx, backoff)
			giveBack(n)
			return
		}
		w.reconnects.Store(r)
	}
	take := func(msg heldJob) {
		got++
		if ctx.Err() != nil { // stopping: let another worker have it now
			w.released.Add(1)
			_ = msg.Nak()
			giveBack(1)
			return
		}
		jobs.Go(func() {
			var once sync.Once
			release := func() { once.Do(func() { giveBack(1) }) }
			defer release()
			w.handle(calls, msg, release)
		})
	}
	var err error
	if w.viaAgent.Load() {
		err = w.pullViaAgent(ctx, n, pollWait, take)
		if errors.Is(err, errNoAgent) {
			w.viaAgent.Store(false)
			err = jetstream.ErrConsumerNotFound // look again
		}
	} else {
		var batch jetstream.MessageBatch
		batch, err = w.consumer().Fetch(n, jetstream.FetchMaxWait(pollWait))
		if err == nil {
			for msg := range batch.Messages() {
				take(msg)
			}
			err = batch.Error()
		}
	}
	defer giveBack(n - got)
	if err == nil || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return
	}
	w.log.Debug("fetch jobs", "route", w.route, "err", err)
	if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, nats.ErrNoResponders) {
		_ = w.ensureConsumer(ctx)
	}
	_ = wait.Sleep(ctx, backoff)
}

// activeJob is a job whose model calls are under way: cancel ends them;
// check, for a job delivered through the engine's agent, asks its
// heartbeat to ask the agent now whether the job was withdrawn.
type activeJob struct {
	cancel context.CancelCauseFunc
	check  chan struct{} // nil: a job delivered directly (no roles)
}

// onCancel cancels the model call of a withdrawn job, or remembers the
// notice for a job not taken yet. A notice for a job delivered through
// the agent is a hint: any client can have JetStream answer a request on
// a cancel subject (review18: a worker credential had honest workers
// terminate jobs never withdrawn, and their samples fail naming them),
// so the agent, which the coordinator tells of each withdrawal first
// (Drawer.withdraw), says whether it is one.
func (w *Worker) onCancel(m *nats.Msg) {
	id := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	w.mu.Lock()
	defer w.mu.Unlock()
	if a, ok := w.active[id]; ok {
		if a.check == nil {
			a.cancel(errWithdrawn)
			return
		}
		select {
		case a.check <- struct{}{}:
		default: // a check is due already
		}
		return
	}
	now := time.Now()
	if len(w.withdrawn) >= 4096 {
		for k, at := range w.withdrawn {
			if now.Sub(at) > time.Minute {
				delete(w.withdrawn, k)
			}
		}
	}
	if len(w.withdrawn) < 8192 {
		w.withdrawn[id] = now
	}
}

// track registers a job's model call; false if a notice of its
// withdrawal came first, which the caller confirms for a job delivered
// through the agent (onCancel), registering the call (follow) if it was
// none.
func (w *Worker) track(id string, a activeJob) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.withdrawn[id]; ok {
		delete(w.withdrawn, id)
		return false
	}
	w.active[id] = a
	return true
}

// follow registers a job's model call whatever notices came before, and
// has its heartbeat ask the agent once more at its start, for a notice
// that came while the agent was asked (review19).
func (w *Worker) follow(id string, a activeJob) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.withdrawn, id)
	w.active[id] = a
	select {
	case a.check <- struct{}{}:
	default:
	}
}

func (w *Worker) untrack(id string) {
	w.mu.Lock()
	delete(w.active, id)
	w.mu.Unlock()
}

// heldJob is a job delivered to this worker: a message of the route's
// consumer (a server without roles), or one the engine's agent forwarded
// (agentJob), whose acts go through the agent.
type heldJob interface {
	Data() []byte
	Headers() nats.Header
	Subject() string
	Metadata() (*jetstream.MsgMetadata, error)
	Ack() error
	Nak() error
	NakWithDelay(time.Duration) error
	InProgress() error
	Term() error
	TermWithReason(string) error
}

// handle draws one job's samples (each its own model call, at most
// Inflight of the worker's at once) and replies once for all of them;
// release frees the job's place, once its model calls are over (its
// reply may wait for room without one: parked.go).
func (w *Worker) handle(calls context.Context, msg heldJob, release func()) {
	job, derr := decodeJob(msg.Data())
	if derr != nil {
		w.bad.Add(1)
		w.log.Warn("bad job terminated", "subject", msg.Subject(), "err", derr)
		_ = msg.TermWithReason("undecodable job")
		return
	}
	var deliveries uint64
	if md, err := msg.Metadata(); err == nil {
		deliveries = md.NumDelivered
	}
	if _, viaAgent := msg.(*agentJob); !viaAgent && !keeps(msg.Headers(), w.identity, deliveries) {
		// No agent (a server without roles): the worker itself keeps off
		// a job whose coordinator avoids or quarantined it.
		_ = msg.Nak()
		return
	}
	tok, key := replyDrawer(job), publisherOf(msg)
	d := w.notReading(tok)
	if d <= 0 {
		d = w.parkedFull(key)
	}
	if d > 0 {
		// Its Drawer left this worker's replies untaken, or its
		// coordinator's replies wait for room already: no model call
		// (and no place held) for it until then.
		w.released.Add(1)
		_ = msg.NakWithDelay(d)
		return
	}
	if deliveries > 1 {
		w.redelivered.Add(1)
		// A redelivery means a worker died or stalled holding the job, or
		// handed it back (stopped past its grace, a reply not published):
		// the operator's signal that work on the job was lost once.
		w.log.Info("took a redelivered job", "job", job.ID, "deliveries", deliveries)
	}
	// Each job's start and end at Debug: which jobs a worker held when it
	// stalled or died. The check spares the hot path the arguments.
	outcome := "answered"
	if w.log.Enabled(calls, slog.LevelDebug) {
		w.log.Debug("took a job", "job", job.ID, "samples", len(job.Samples), "deliveries", deliveries)
		defer func() { w.log.Debug("job done", "job", job.ID, "outcome", outcome) }()
	}
	ctx, cancel := context.WithCancelCause(traceContext(calls, msg.Headers()))
	defer cancel(nil)
	active := activeJob{cancel: cancel}
	if _, ok := msg.(*agentJob); ok {
		active.check = make(chan struct{}, 1)
	}
	if !w.track(job.ID, active) {
		// A notice came first; through the agent, the agent's word
		// withdraws the job, or it is called all the same.
		if active.check == nil || errors.Is(msg.InProgress(), errJobWithdrawn) {
			outcome = "withdrawn"
			w.withdrawnN.Add(1)
			_ = msg.Term()
			return
		}
		w.follow(job.ID, active)
	}
	defer w.untrack(job.ID)

	replies := make([]SampleReply, len(job.Samples))
	failed := 0
	if job.Route != w.route {
		err := fmt.Errorf("worker %s serves route %q, not %q", w.name, w.route, job.Route)
		for i := range replies {
			replies[i] = sampleReplyOf(nil, err, 0)
		}
		failed = len(replies)
	} else {
		prompts := make([][]llms.MessageContent, len(job.Prompts))
		for p, msgs := range job.Prompts {
			prompts[p] = make([]llms.MessageContent, len(msgs))
			for i, m := range msgs {
				prompts[p][i] = llms.MessageContent(m)
			}
		}
		// Progress reports run until the reply is out (stopping them
		// waits for their goroutine: not on the reply's way).
		defer heartbeat(msg, time.Duration(w.ackWait.Load()), active.check, func() { cancel(errWithdrawn) })()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i, s := range job.Samples {
			select {
			case w.slots <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
			wg.Go(func() {
				defer func() { <-w.slots }()
				sctx := ctx
				if !s.Anon {
					sctx = maker.WithSampleID(ctx, maker.SampleID{Step: s.Step, Index: s.Index})
				}
				start := time.Now()
				resp, err := w.generate(sctx, prompts[s.Prompt], job.options(s))
				replies[i] = sampleReplyOf(resp, err, time.Since(start))
				if err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	if cause := context.Cause(ctx); cause != nil {
		if errors.Is(cause, errWithdrawn) {
			outcome = "withdrawn"
			w.withdrawnN.Add(1)
			_ = msg.Term()
			return
		}
		outcome = "handed back"
		w.released.Add(1) // stopping after the grace period
		_ = msg.Nak()
		return
	}
	reply := Reply{Version: WireVersion, ID: job.ID, Lease: job.Lease, Worker: w.name, Samples: replies}
	data, merr := json.Marshal(reply)
	if merr != nil {
		err := fmt.Errorf("the reply could not be encoded: %w", merr)
		for i := range reply.Samples {
			reply.Samples[i] = sampleReplyOf(nil, err, reply.Samples[i].Took)
		}
		failed = len(reply.Samples)
		data, _ = json.Marshal(reply)
	}
	// The reply waits for room within parkMax, and ends with its job:
	// withdrawn, or handed back at the end of a stop's Grace.
	pctx, pcancel := context.WithTimeout(ctx, parkMax)
	defer pcancel()
	release()
	subject := replySubject(job.ReplyTo, w.identity)
	msgID := replyMsgID(job.Lease, job.ID, handleOf(msg))
	perr := w.publishReply(pctx, msg, tok, key, subject, data, msgID)
	if errors.Is(perr, errTooLarge) {
		// No redelivery could store it either: the samples fail, once,
		// saying why.
		err := fmt.Errorf("the reply (%d bytes) is larger than the engine takes: ask for shorter answers or fewer samples a wave: %w", len(data), perr)
		for i := range reply.Samples {
			reply.Samples[i] = sampleReplyOf(nil, err, reply.Samples[i].Took)
		}
		failed = len(reply.Samples)
		data, _ = json.Marshal(reply)
		perr = w.publishReply(pctx, msg, tok, key, subject, data, msgID)
	}
	if perr != nil && errors.Is(context.Cause(ctx), errWithdrawn) {
		// Withdrawn while its reply waited: no one needs it again.
		outcome = "withdrawn"
		w.withdrawnN.Add(1)
		_ = msg.Term()
		return
	}
	if perr != nil {
		w.log.Warn("reply not published; job handed back", "job", job.ID, "err", perr)
		outcome = "handed back"
		w.released.Add(1)
		if errors.Is(perr, errDrawerGone) {
			return
		}
		if errors.Is(perr, errNoRoom) {
			w.stall(tok)
			_ = msg.NakWithDelay(notReadingFor)
			return
		}
		_ = msg.Nak()
		return
	}
	w.served.Add(int64(len(replies)))
	w.failed.Add(int64(failed))
	_ = msg.Ack()
}

// publishReply publishes a reply on subject of RepliesStream. While this
// worker's replies to the Drawer fill their room (ProvisionConfig.ReplyKeep:
// the Drawer has not taken them yet), it tries again, as the room is its
// own (no other worker's replies take it), until ctx ends, or until it
// has waited roomWait while none of this worker's replies to that Drawer
// found room in the last roomWait (the Drawer is not reading: errNoRoom);
// the reply holds no worker place meanwhile (parked.go). While no stream
// takes the Drawer's subject (two agents writing the stream's subjects
// at once may drop a live Drawer's for up to replyReconcile: see
// replySpace; the agent delivers no job of a Drawer without a consumer),
// it tries again for up to noStreamWait; a job delivered through an agent
// asks it every goneEvery whether the Drawer closed, and is then
// terminated (errDrawerGone). A try that got no answer within publishTry
// is made again, under the same message ID, until ctx ends (parkMax, within
// the streams' dedupeWindow). A reply larger than the engine stores is
// errTooLarge at once.
func (w *Worker) publishReply(ctx context.Context, msg heldJob, tok, key, subject string, data []byte, id string) error {
	began := time.Now()
	// Parked (counted against key's parking) from its first wait: for
	// its turn, for room, or for a stream.
	parked := false
	waiting := func() {
		if !parked {
			parked = true
			w.park(key, began)
		}
	}
	defer func() {
		if parked {
			w.unpark(key, began)
		}
	}()
	done, err := w.queue(ctx, tok, waiting)
	if err != nil {
		return fmt.Errorf("waited %s for this worker's earlier replies to its coordinator: %w", time.Since(began).Round(time.Second), err)
	}
	defer done()
	asked := time.Now()
	live := began // when the agent last said the Drawer lives: its subject comes back
	for pause := time.Millisecond; ; pause = min(2*pause, 25*time.Millisecond) {
		tctx, cancel := context.WithTimeout(ctx, publishTry)
		_, err := w.js.Publish(tctx, subject, data, jetstream.WithMsgID(id), jetstream.WithExpectStream(RepliesStream))
		cancel()
		unanswered := ctx.Err() == nil && isUnanswered(err)
		noStream := errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
			// A cut of the connection fails the publications under way
			// with ErrConnectionClosed: the message ID makes another
			// try safe.
			errors.Is(err, nats.ErrConnectionClosed) && !w.nc.IsClosed()
		noRoom := err != nil && strings.Contains(err.Error(), "maximum messages per subject exceeded")
		switch {
		case err == nil:
			w.roomTaken(tok)
			return nil
		case errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum):
			return fmt.Errorf("%w: %w", errTooLarge, err)
		case !noStream && !noRoom && !unanswered:
			return err
		}
		waiting()
		if aj, ok := msg.(*agentJob); ok && noStream && time.Since(asked) >= goneEvery {
			// Through an agent: is the Drawer gone, or only its subject?
			asked = time.Now()
			switch err := aj.act("gone", "", 0); {
			case err == nil:
				return errDrawerGone
			case errors.Is(err, errDrawerLive):
				live = asked
			}
		}
		if noRoom && time.Since(began) > roomWait && !w.reading(tok) {
			return fmt.Errorf("%w (its room there stayed full for %s): %w", errNoRoom, time.Since(began).Round(time.Second), err)
		}
		if noStream && time.Since(live) > noStreamWait || wait.Sleep(ctx, pause) != nil {
			return fmt.Errorf("%w (this worker's reply found no room, no stream or no answer for the coordinator within %s)", err, time.Since(began).Round(time.Second))
		}
	}
}

// isUnanswered reports whether err is a try to store a message that got
// no answer within publishTry, or a try that found an earlier one still
// being stored (a clustered stream answers a copy of a message proposed
// but not yet applied "duplicate message id is in process"): tried again
// (see publishTry), for the earlier try's outcome decides.
func isUnanswered(err error) bool {
	// inProcess: the journal's test of the same answer (its other case,
	// an expectation not yet checkable, needs a header these lack).
	return inProcess(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)
}

// generate is one model call; a panic in the model is its error.
func (w *Worker) generate(ctx context.Context, msgs []llms.MessageContent, o CallOptions) (resp *llms.ContentResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, fmt.Errorf("the worker's model panicked: %v", r)
		}
	}()
	return w.model.GenerateContent(ctx, msgs, o.option())
}
