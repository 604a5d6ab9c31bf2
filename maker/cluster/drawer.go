package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

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

// withdrawTimeout bounds the deletion of a withdrawn job.
const withdrawTimeout = 5 * time.Second

// DrawerConfig configures a Drawer.
type DrawerConfig struct {
	// Timeout bounds one sample, queueing included; zero means
	// DefaultTimeout. A job not taken by then expires from the queue; a
	// sample not answered by then fails with ErrNoReply and its job is
	// withdrawn.
	Timeout time.Duration
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
// mdap.replies.<drawer id>.>), created by NewDrawer and deleted by Close.
// It is safe for concurrent use.
//
// What happens when a part dies:
//   - a worker: its unacknowledged jobs are redelivered to another worker
//     of the route after the route's ack wait; the sample waits that long,
//     then gets the same answer (the job carries the sample's identity);
//   - this coordinator: its jobs still queued expire after Timeout, its
//     consumer after an hour of inactivity, and replies to it after an
//     hour; nothing else is affected;
//   - the server: the connection reconnects; calls in flight fail
//     (ErrEngine, ErrNoReply) and the race draws them again, within its
//     error budget; queued jobs and replies survive on the server's store.
type Drawer struct {
	js      jetstream.JetStream
	nc      *nats.Conn
	jobs    jetstream.Stream
	id      string
	timeout time.Duration
	log     *slog.Logger
	cc      jetstream.ConsumeContext

	mu      sync.Mutex
	pending map[string]chan Reply
	closed  bool
	done    chan struct{}
	calls   sync.WaitGroup // GenerateContent calls in flight
	bg      sync.WaitGroup // withdrawals

	published, replies, duplicates, withdrawn, deleted, bad atomic.Int64
}

// DrawerStats counts what a Drawer did.
type DrawerStats struct {
	// Published jobs, one per sample.
	Published int64
	// Replies that answered a waiting call.
	Replies int64
	// Duplicates are replies to no waiting call: a second reply to a job
	// that was redelivered, or a reply that came after its call ended.
	// They count nowhere.
	Duplicates int64
	// Withdrawn jobs: the call ended (the race was decided, the timeout
	// passed) before a reply came. Deleted of them were still queued, so
	// no worker ever drew them.
	Withdrawn, Deleted int64
	// Bad replies that did not decode, dropped.
	Bad int64
}

// NewDrawer creates the sample streams if they do not exist, and this
// drawer's reply consumer. Close it when done; the connection stays the
// caller's. Errors wrap ErrEngine.
func NewDrawer(ctx context.Context, js jetstream.JetStream, cfg DrawerConfig) (*Drawer, error) {
	jobs, err := ensureSampleStreams(ctx, js, cfg.Replicas)
	if err != nil {
		return nil, err
	}
	d := &Drawer{
		js: js, nc: js.Conn(), jobs: jobs, id: "d" + nuid.Next(),
		timeout: cmpOr(cfg.Timeout, DefaultTimeout),
		log:     cfg.Logger,
		pending: map[string]chan Reply{},
		done:    make(chan struct{}),
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	cons, err := js.CreateConsumer(ctx, RepliesStream, jetstream.ConsumerConfig{
		Name:              d.id,
		Description:       "mdap replies to one coordinator",
		FilterSubject:     repliesSubject + d.id + ".>",
		AckPolicy:         jetstream.AckExplicitPolicy,
		AckWait:           30 * time.Second,
		InactiveThreshold: time.Hour,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: the reply consumer: %w", ErrEngine, err)
	}
	d.cc, err = cons.Consume(d.onReply, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		d.log.Debug("reply consumer", "err", err)
	}))
	if err != nil {
		return nil, fmt.Errorf("%w: consume replies: %w", ErrEngine, err)
	}
	return d, nil
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
func (d *Drawer) Model(route string) (*Model, error) {
	if route == "" {
		return nil, fmt.Errorf("%w: empty route: name the model the workers serve", ErrConfig)
	}
	token := RouteToken(route)
	return &Model{d: d, route: route, token: token, subject: jobsSubject + token}, nil
}

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
		Published: d.published.Load(), Replies: d.replies.Load(), Duplicates: d.duplicates.Load(),
		Withdrawn: d.withdrawn.Load(), Deleted: d.deleted.Load(), Bad: d.bad.Load(),
	}
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
	d.cc.Stop()
	<-d.cc.Closed()
	ctx, cancel := context.WithTimeout(context.Background(), withdrawTimeout)
	defer cancel()
	if err := d.js.DeleteConsumer(ctx, RepliesStream, d.id); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("%w: delete the reply consumer %s: %w", ErrEngine, d.id, err)
	}
	return nil
}

// onReply hands a reply to its waiting call, once.
func (d *Drawer) onReply(msg jetstream.Msg) {
	defer func() { _ = msg.Ack() }()
	var r Reply
	if err := json.Unmarshal(msg.Data(), &r); err != nil || r.Version != WireVersion || r.ID == "" {
		d.bad.Add(1)
		d.log.Debug("bad reply dropped", "subject", msg.Subject(), "err", err, "version", r.Version)
		return
	}
	d.mu.Lock()
	ch, ok := d.pending[r.ID]
	delete(d.pending, r.ID)
	d.mu.Unlock()
	if !ok {
		d.duplicates.Add(1)
		d.log.Debug("reply to no waiting call", "job", r.ID, "worker", r.Worker)
		return
	}
	d.replies.Add(1)
	ch <- r // buffered; the only send, since the entry is gone
}

// begin registers a call waiting for job id's reply.
func (d *Drawer) begin(id string) (chan Reply, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, false
	}
	ch := make(chan Reply, 1)
	d.pending[id] = ch
	d.calls.Add(1)
	return ch, true
}

// end unregisters a call.
func (d *Drawer) end(id string) {
	d.mu.Lock()
	delete(d.pending, id)
	d.mu.Unlock()
	d.calls.Done()
}

// withdraw takes back a job whose call ended without a reply: a notice
// for a worker that took it (it stops the model call), and the deletion
// of the job from the queue if no worker took it yet.
func (d *Drawer) withdraw(token, id string, seq uint64) {
	d.withdrawn.Add(1)
	_ = d.nc.Publish(cancelSubject+token+"."+id, nil) // best effort: a lost notice costs one model call
	d.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), withdrawTimeout)
		defer cancel()
		if err := d.jobs.DeleteMsg(ctx, seq); err == nil {
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
}

var (
	_ llms.Model       = (*Model)(nil)
	_ maker.Identifier = (*Model)(nil)
)

// Identity is the route: the identity of the model the workers run.
func (m *Model) Identity() string { return m.route }

// Route returns the route; RouteToken(Route()) is its subject token.
func (m *Model) Route() string { return m.route }

// Call implements llms.Model's single-prompt method.
func (m *Model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// GenerateContent publishes one job (the messages, the call options that
// travel, the sample identity in ctx) on the route's queue and waits for
// its reply. Cost: one JetStream publish, acknowledged, then the worker's
// model call and two more stored messages (the reply, and the worker's
// acknowledgement); on loopback, well under a millisecond beside the
// model (see BenchmarkEngine).
//
// When ctx ends first (the race was decided) or the Drawer's Timeout
// passes, the job is withdrawn: deleted from the queue if no worker took
// it, otherwise its worker is told to stop. A reply that comes twice (the
// job was redelivered after its worker died) counts once.
//
// Errors: ctx.Err() when ctx ends first; ErrNoReply after the Timeout;
// ErrRemote wrapping the worker model's error; ErrEngine when the job
// could not be published; ErrClosed after Drawer.Close.
func (m *Model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := m.d
	job := Job{Version: WireVersion, ID: nuid.Next(), Route: m.route, Options: callOptionsOf(opts)}
	job.ReplyTo = repliesSubject + d.id + "." + job.ID
	if id, ok := maker.SampleIDFrom(ctx); ok {
		job.Sample = &Sample{Step: id.Step, Index: id.Index}
	}
	job.Messages = make([]Message, len(msgs))
	for i, mc := range msgs {
		job.Messages[i] = Message(mc)
	}
	data, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("%w: encode the job: %w", ErrUndecodable, err)
	}
	ch, ok := d.begin(job.ID)
	if !ok {
		return nil, ErrClosed
	}
	defer d.end(job.ID)
	callCtx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	// The publication is not cut short by ctx: a job stored without its
	// sequence known could not be withdrawn.
	pubCtx, pubCancel := context.WithTimeout(context.WithoutCancel(ctx), min(d.timeout, publishTimeout))
	ack, err := d.js.PublishMsg(pubCtx, jobMsg(ctx, m.subject, data),
		jetstream.WithMsgID(job.ID), jetstream.WithExpectStream(JobsStream),
		jetstream.WithMsgTTL(max(d.timeout, time.Second)))
	pubCancel()
	if err != nil {
		// It may have been stored all the same: a worker that took it
		// stops; the queue drops it at its TTL.
		_ = d.nc.Publish(cancelSubject+m.token+"."+job.ID, nil)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: publish a job for %s: %w", ErrEngine, m.route, err)
	}
	d.published.Add(1)
	select {
	case r := <-ch:
		return r.response(m.route)
	case <-callCtx.Done():
	case <-d.done:
	}
	select {
	case r := <-ch:
		if ctx.Err() == nil {
			return r.response(m.route)
		}
	default:
		d.withdraw(m.token, job.ID, ack.Sequence)
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case callCtx.Err() != nil:
		return nil, fmt.Errorf("%w: %s: no reply within %s", ErrNoReply, m.route, d.timeout)
	}
	return nil, ErrClosed
}
