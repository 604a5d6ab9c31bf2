package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/wait"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/tmc/langchaingo/llms"
)

// DefaultGather is DrawerConfig.Gather's default.
const DefaultGather = 2 * time.Millisecond

// call is one GenerateContent waiting for its sample.
type call struct {
	sample Sample
	msgs   []llms.MessageContent
	opts   CallOptions
	ctx    context.Context // for the job's trace context
	ch     chan answer     // the sample's answer; buffered, sent once
	ready  chan struct{}   // closed once the job is published (or not)
	flight *flight         // set before ready closes; nil when err is
	err    error           // the publication's failure
	ended  bool            // the call stopped waiting (under Drawer.mu)
}

// answer is a sample's reply and the worker that drew it: the name it
// claims, for people, and its identity (voterOf), for the vote.
type answer struct {
	r      SampleReply
	worker string
	voter  string
	err    error // the reply under the job's lease did not decode
}

// result is the call's result: the sample's, each choice naming its
// voter, or err.
func (a answer) result(route string) (*llms.ContentResponse, error) {
	if a.err != nil {
		return nil, a.err
	}
	resp, err := a.r.response(route, a.worker)
	if err == nil {
		stampVoter(resp, a.voter)
	}
	return resp, err
}

// flight is a published job whose calls wait for its reply.
type flight struct {
	id, lease string
	m         *Model
	calls     []*call
	seq       uint64 // under Drawer.mu once published
	live      int    // calls still waiting (under Drawer.mu)
	// reasking: a publish of it again after a reconnection failed (its
	// ack may have been lost with the job stored), so a duplicate on the
	// next try is that try's own job (under Drawer.mu).
	reasking bool
	// The job's message, to ask again after a server restart.
	subject string
	data    []byte
	header  nats.Header
}

// waveKey names a wave of one step: vote.Race launched its samples
// First..First+N-1 together.
type waveKey struct{ step, first, n int }

// gather is a wave's calls arriving; the first publishes them.
type gather struct {
	calls []*call
	asked int // samples the calls ask for (a call with n choices asks for n)
	want  int
	full  chan struct{} // closed when asked reaches want
}

// GenerateContent asks the route's workers for one sample: the messages,
// the call options that travel and the sample identity in ctx. The calls
// of one wave of a step (vote.WaveFrom: the samples vote.Race started
// together) share one job: the first call waits until the wave's calls
// have arrived (at most DrawerConfig.Gather) and publishes one job carrying the prompt
// once and each sample's identity, seed and temperature; the worker
// that takes it answers every sample in one reply (with
// DrawerConfig.Spread each sample is a job of its own). Each sample keeps its
// own identity, so the answers are the same whatever the batching. Cost:
// one JetStream publish, acknowledged, per wave, then the worker's model
// calls and two more stored messages (the reply and the worker's
// acknowledgement); see BenchmarkEngine.
//
// When ctx ends first (the race was decided) or the Drawer's Timeout
// passes, the call stops waiting; once every call of a job has, the job
// is withdrawn: deleted from the queue if no worker took it, otherwise
// its worker is told to stop. A reply that comes twice (the job was
// redelivered after its worker died) counts once.
//
// Errors: ctx.Err() when ctx ends first; ErrNoReply after the Timeout;
// ErrRemote wrapping the worker model's error; ErrEngine when the job
// could not be published; ErrNoWorker when no worker serves the route;
// ErrClosed after Drawer.Close.
func (m *Model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := m.d
	c := &call{msgs: msgs, opts: callOptionsOf(opts), ctx: ctx, ch: make(chan answer, 1), ready: make(chan struct{})}
	id, hasID := maker.SampleIDFrom(ctx)
	if hasID {
		c.sample = Sample{Step: id.Step, Index: id.Index}
	} else {
		c.sample = Sample{Anon: true}
	}
	if err := m.served(ctx, false); err != nil {
		return nil, err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, ErrClosed
	}
	d.calls.Add(1)
	d.mu.Unlock()
	defer d.calls.Done()

	w, inWave := vote.WaveFrom(ctx)
	inWave = inWave && hasID && w.N > 1 && id.Index >= w.First && id.Index < w.First+w.N && !d.spread
	if !inWave {
		d.publish(m, []*call{c})
	} else {
		m.join(waveKey{id.Step, w.First, w.N}, c)
	}
	<-c.ready
	if c.err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.err
	}
	return m.wait(ctx, c)
}

// join adds c to its wave's gathering; the wave's first call waits for
// the others (or DrawerConfig.Gather) and publishes them all.
func (m *Model) join(key waveKey, c *call) {
	m.wmu.Lock()
	if m.waves == nil {
		m.waves = map[waveKey]*gather{}
	}
	g, ok := m.waves[key]
	first := !ok
	if first {
		g = &gather{want: key.n, full: make(chan struct{})}
		m.waves[key] = g
	}
	g.calls = append(g.calls, c)
	g.asked += max(1, c.opts.N)
	if g.asked >= g.want {
		close(g.full)
		delete(m.waves, key) // a later call of this key starts a new job
	}
	m.wmu.Unlock()
	if !first {
		return
	}
	t := time.NewTimer(m.d.gather)
	select {
	case <-g.full:
	case <-t.C:
	}
	t.Stop()
	m.wmu.Lock()
	if m.waves[key] == g {
		delete(m.waves, key)
	}
	calls := g.calls
	g.calls = nil // none joins after this (it was deleted under wmu)
	m.wmu.Unlock()
	for len(calls) > 0 {
		n := min(len(calls), MaxJobSamples)
		m.d.publish(m, calls[:n])
		calls = calls[n:]
	}
}

// publish sends one job for calls (1 to MaxJobSamples of one route),
// registers it and releases the calls: each gets the flight, or the
// publication's error.
func (d *Drawer) publish(m *Model, calls []*call) {
	release := func(f *flight, err error) {
		for _, c := range calls {
			c.flight, c.err = f, err
			close(c.ready)
		}
	}
	job := Job{Version: WireVersion, ID: nuid.Next(), Route: m.route, Lease: leaseKey(), Samples: make([]Sample, len(calls))}
	job.ReplyTo = repliesSubject + d.token + "." + job.ID
	base := calls[0].opts
	base.Seed, base.Temperature = 0, nil
	job.Options = base
	var prompts [][]llms.MessageContent
	for i, c := range calls {
		s := c.sample
		s.Prompt = -1
		for p, msgs := range prompts {
			if samePrompt(msgs, c.msgs) {
				s.Prompt = p
				break
			}
		}
		if s.Prompt < 0 {
			s.Prompt = len(prompts)
			prompts = append(prompts, c.msgs)
		}
		o := c.opts
		s.Seed, s.Temperature = o.Seed, o.Temperature
		o.Seed, o.Temperature = 0, nil
		if i > 0 && !reflect.DeepEqual(o, base) {
			full := c.opts
			s.Options, s.Seed, s.Temperature = &full, 0, nil
		}
		job.Samples[i] = s
	}
	job.Prompts = make([][]Message, len(prompts))
	for p, msgs := range prompts {
		job.Prompts[p] = make([]Message, len(msgs))
		for i, mc := range msgs {
			job.Prompts[p][i] = Message(mc)
		}
	}
	data, err := json.Marshal(job)
	if err != nil {
		release(nil, fmt.Errorf("%w: encode the job: %w", ErrUndecodable, err))
		return
	}
	ctx := calls[0].ctx
	msg := jobMsg(ctx, m.subject, data)
	step := -1
	if !calls[0].sample.Anon {
		step = calls[0].sample.Step
	}
	msg.Header = d.book.headers(msg.Header, step, d.spread)
	f := &flight{id: job.ID, lease: job.Lease, m: m, calls: calls, live: len(calls), subject: msg.Subject, data: data, header: msg.Header}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		release(nil, ErrClosed)
		return
	}
	d.wait(f)
	d.mu.Unlock()
	ack, err := d.publishJob(ctx, m, msg, job.ID)
	if err != nil {
		d.mu.Lock()
		d.forget(f)
		d.mu.Unlock()
		// It may have been stored all the same: a worker that took it
		// stops; the queue drops it at its TTL.
		_ = d.nc.Publish(cancelSubject+m.token+"."+job.ID, nil)
		release(nil, fmt.Errorf("%w: publish a job for %s on stream %s: %w%s", ErrEngine, m.route, JobsStream, err, jobHint(err)))
		return
	}
	d.mu.Lock()
	f.seq = ack.Sequence
	d.mu.Unlock()
	d.published.Add(1)
	d.samples.Add(int64(len(calls)))
	release(f, nil)
}

// keyJobsWait is how long a Drawer waits before publishing a job again
// that the engine refused: its route not served yet, or this key's jobs
// of the route at the engine's bound.
const keyJobsWait = 100 * time.Millisecond

// publishJob publishes a job of m's route. The engine takes jobs only on
// the routes it serves (a worker asked for the route), and at most
// ProvisionConfig.KeyJobs of one key on a route: a job of a route not
// served yet is published again until NoWorker has passed, then fails
// with ErrNoWorker unless a worker serves the route by then; a job past
// this key's bound is published again, as its earlier jobs are taken,
// until the Timeout, as is one that got no answer within publishTry (and
// within the stream's dedupeWindow). Each attempt is not cut short by the
// calls' context (a job stored without its sequence known could not be
// withdrawn); the waits between them are.
func (d *Drawer) publishJob(ctx context.Context, m *Model, msg *nats.Msg, id string) (*jetstream.PubAck, error) {
	began := time.Now()
	for {
		pubCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(d.timeout, publishTry))
		ack, err := d.js.PublishMsg(pubCtx, msg,
			jetstream.WithMsgID(id), jetstream.WithExpectStream(JobsStream),
			jetstream.WithMsgTTL(max(d.timeout, time.Second)))
		cancel()
		unserved := errors.Is(err, jetstream.ErrNoStreamResponse)
		switch {
		case err == nil:
			return ack, nil
		case unserved && d.noWorker >= 0 && time.Since(began) >= d.noWorker:
			if serr := m.served(ctx, true); serr != nil {
				return nil, serr
			}
		case unserved, isUnanswered(err), strings.Contains(err.Error(), "maximum messages per subject exceeded"):
		default:
			return nil, err
		}
		if time.Since(began)+keyJobsWait >= d.timeout ||
			// A copy past the window could be stored a second time.
			isUnanswered(err) && time.Since(began)+publishTry >= dedupeWindow {
			return nil, err
		}
		if werr := wait.Sleep(ctx, keyJobsWait); werr != nil {
			return nil, err
		}
	}
}

// samePrompt reports whether a and b are the same prompt: the same slice,
// or equal messages.
func samePrompt(a, b []llms.MessageContent) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i].Role != b[i].Role || len(a[i].Parts) != len(b[i].Parts) {
			return false
		}
		for j, pa := range a[i].Parts {
			ta, okA := pa.(llms.TextContent)
			tb, okB := b[i].Parts[j].(llms.TextContent)
			switch {
			case okA && okB:
				if ta.Text != tb.Text {
					return false
				}
			case !reflect.DeepEqual(pa, b[i].Parts[j]):
				return false
			}
		}
	}
	return true
}

// wait waits for c's answer, the Timeout, ctx or the Drawer's Close; a
// call that stops waiting withdraws its job if it was the job's last.
func (m *Model) wait(ctx context.Context, c *call) (*llms.ContentResponse, error) {
	d := m.d
	callCtx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	var check <-chan time.Time
	if d.noWorker > 0 {
		t := time.NewTicker(d.noWorker)
		defer t.Stop()
		check = t.C
	}
	// noWorker: no worker serves the route, or no reply can be stored
	// (a full reply stream): the call fails now, not at its Timeout.
	var noWorker error
wait:
	for {
		select {
		case a := <-c.ch:
			return a.result(m.route)
		case <-callCtx.Done():
			break wait
		case <-d.done:
			break wait
		case <-check:
			if noWorker = m.served(callCtx, true); noWorker != nil {
				break wait
			}
			if noWorker = d.repliesFull(callCtx); noWorker != nil {
				break wait
			}
		}
	}
	select {
	case a := <-c.ch:
		if ctx.Err() == nil {
			return a.result(m.route)
		}
	default:
		d.stopWaiting(c)
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case noWorker != nil:
		return nil, noWorker
	case callCtx.Err() != nil:
		return nil, fmt.Errorf("%w: %s: no reply within %s", ErrNoReply, m.route, d.timeout)
	}
	return nil, ErrClosed
}

// stopWaiting records that c no longer waits; the job is withdrawn when
// none of its calls does and no reply came.
func (d *Drawer) stopWaiting(c *call) {
	f := c.flight
	d.mu.Lock()
	if c.ended {
		d.mu.Unlock()
		return
	}
	c.ended = true
	f.live--
	last := f.live == 0 && d.pending[f.id] == f
	if last {
		d.forget(f)
	}
	seq := f.seq
	d.mu.Unlock()
	if last {
		d.withdraw(f.m.token, f.id, f.lease, seq)
	}
}
