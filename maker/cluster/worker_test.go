package cluster_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// jobsOn counts the jobs queued for route.
func jobsOn(t *testing.T, js jetstream.JetStream, route string) uint64 {
	t.Helper()
	st, err := js.Stream(context.Background(), cluster.JobsStream)
	require.NoError(t, err)
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter("mdap.jobs."+cluster.RouteToken(route)+".*"))
	require.NoError(t, err)
	return info.State.Msgs
}

func TestWithdrawnAndExpiredJobsLeaveTheQueue(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	// A job's TTL is the timeout (at least a second): 2 s leaves a
	// withdrawn job's deletion time to run before the TTL could take it,
	// even on a loaded machine, so Deleted counts deletions, not expiries.
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 2 * time.Second})
	const route = "nobody serves this"
	m, err := d.Model(route)
	require.NoError(t, err)
	served, err := d.Served(context.Background(), route)
	require.NoError(t, err)
	assert.False(t, served, "no worker ever served the route")

	// The race was decided: the call's context ends (once its job is
	// queued), the job is deleted.
	ctx, cancel := context.WithCancel(context.Background())
	st, err := js.Stream(context.Background(), cluster.JobsStream)
	require.NoError(t, err)
	queued := func() bool {
		info, err := st.Info(context.Background(), jetstream.WithSubjectFilter("mdap.jobs."+cluster.RouteToken(route)+".*"))
		return err == nil && info.State.Msgs > 0
	}
	go func() {
		for ctx.Err() == nil && !queued() {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err = m.Call(ctx, "hello")
	require.ErrorIs(t, err, context.Canceled)
	require.Eventually(t, func() bool { return d.Stats().Deleted == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Zero(t, jobsOn(t, js, route), "no worker will ever draw a withdrawn job")

	// No reply in time: ErrNoReply, and the job leaves the queue too:
	// deleted, or taken by its TTL, which ends with the timeout.
	_, err = m.Call(context.Background(), "hello")
	require.ErrorIs(t, err, cluster.ErrNoReply)
	require.Eventually(t, func() bool { return jobsOn(t, js, route) == 0 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, int64(2), d.Stats().Withdrawn)
	assert.LessOrEqual(t, d.Stats().Deleted, int64(2))

	_, err = d.Model("")
	require.ErrorIs(t, err, cluster.ErrConfig)
	require.NoError(t, d.Close())
	_, err = m.Call(context.Background(), "hello")
	require.ErrorIs(t, err, cluster.ErrClosed)
}

// A worker that dies holding a job loses it only for the ack wait: the
// job is redelivered to another worker, which answers it the same.
func TestDeadWorkersJobIsRedelivered(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	model := simModel(t, 5)
	_, wjs := connect(t, srv.ClientURL())
	w := newWorker(t, wjs, model, cluster.WorkerConfig{AckWait: time.Second})

	// The dying worker: takes the job from the route's consumer and is
	// never heard of again.
	ctx := context.Background()
	dnc, djs := connect(t, srv.ClientURL())
	cons, err := djs.Consumer(ctx, cluster.JobsStream, "w-"+cluster.RouteToken(model.Identity()))
	require.NoError(t, err)
	taken := make(chan struct{})
	var gotOne atomic.Bool
	go func() {
		defer close(taken)
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Minute)) // the job is published meanwhile
		if assert.NoError(t, err) {
			for range batch.Messages() {
				gotOne.Store(true)
				dnc.Close()
			}
		}
	}()

	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 20 * time.Second})
	remote, err := d.Model(model.Identity())
	require.NoError(t, err)
	task, err := hanoi.New(4)
	require.NoError(t, err)
	sctx := maker.WithSampleID(ctx, maker.SampleID{Step: 0, Index: 1})
	var got *llms.ContentResponse
	var callErr error
	var wg sync.WaitGroup
	wg.Go(func() { got, callErr = remote.GenerateContent(sctx, task.Messages(), llms.WithMaxTokens(750)) })
	<-taken
	require.True(t, gotOne.Load(), "the dying worker took the job")
	runWorker(t, w)
	wg.Wait()
	require.NoError(t, callErr)
	want, err := model.GenerateContent(sctx, task.Messages(), llms.WithMaxTokens(750))
	require.NoError(t, err)
	assert.Equal(t, want.Choices[0].Content, got.Choices[0].Content, "the same sample, whoever draws it")
	assert.Equal(t, int64(1), w.Stats().Redelivered, "%+v", w.Stats())
	require.Eventually(t, func() bool { return w.Stats().Served == 1 }, 5*time.Second, 5*time.Millisecond, "counted once the reply is out")
}

// A reply that arrives twice (a redelivered job answered by two workers)
// counts once; the engine itself drops a second reply with the job's
// lease as its message id. A reply without the job's lease, sent first
// under the job's id, displaces nothing: it is dropped and counted.
func TestReplyTwiceCountsOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 10 * time.Second, NoWorker: rawPullsOnly})
	m, err := d.Model("echo")
	require.NoError(t, err)

	ctx := context.Background()
	// A worker by hand: it answers the job three times.
	_, wjs := connect(t, srv.ClientURL())
	cons, err := wjs.CreateOrUpdateConsumer(ctx, cluster.JobsStream, jetstream.ConsumerConfig{Durable: "w-" + cluster.RouteToken("echo"), FilterSubject: "mdap.jobs." + cluster.RouteToken("echo") + ".*", AckPolicy: jetstream.AckExplicitPolicy})
	require.NoError(t, err)
	done := make(chan []bool, 1)
	go func() {
		var dups []bool
		defer func() { done <- dups }()
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Minute)) // the job is published meanwhile
		if !assert.NoError(t, err) {
			return
		}
		for msg := range batch.Messages() {
			var job cluster.Job
			if !assert.NoError(t, jsonUnmarshal(msg.Data(), &job)) {
				return
			}
			forged := cluster.Reply{Version: cluster.WireVersion, ID: job.ID, Worker: "forger", Samples: []cluster.SampleReply{{Choices: []cluster.Choice{{Content: "forged"}}}}}
			if _, err := wjs.Publish(ctx, job.ReplyTo, jsonMarshal(t, forged), jetstream.WithMsgID(job.ID)); !assert.NoError(t, err) {
				return
			}
			for i, msgID := range []string{job.Lease, job.Lease, job.Lease + "-again"} {
				r := cluster.Reply{Version: cluster.WireVersion, ID: job.ID, Lease: job.Lease, Worker: "hand", Samples: []cluster.SampleReply{{Choices: []cluster.Choice{{Content: []string{"one", "two", "three"}[i]}}}}}
				ack, err := wjs.Publish(ctx, job.ReplyTo, jsonMarshal(t, r), jetstream.WithMsgID(msgID))
				if !assert.NoError(t, err) {
					return
				}
				dups = append(dups, ack.Duplicate)
			}
			_ = msg.Ack()
		}
	}()
	text, err := m.Call(ctx, "hi")
	require.NoError(t, err)
	assert.Equal(t, "one", text)
	assert.Equal(t, []bool{false, true, false}, <-done, "the engine drops the second reply with the job's lease")
	assert.Equal(t, int64(1), d.Stats().Forged, "the reply without the lease")
	require.Eventually(t, func() bool { return d.Stats().Duplicates == 1 }, 5*time.Second, 10*time.Millisecond,
		"the third reply, under another id, reaches the drawer and counts nowhere")
	assert.Equal(t, int64(1), d.Stats().Replies)
}

func TestInflightBoundsAWorker(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	var now, peak atomic.Int64
	slow := maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		n := now.Add(1)
		defer now.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		// Hold the call until three are in flight, then a little longer:
		// time for a fourth to start if the bound did not hold.
		deadline := time.Now().Add(5 * time.Second)
		for now.Load() < 3 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		return maker.TextResponse("ok", "stop"), nil
	})
	_, wjs := connect(t, srv.ClientURL())
	w := newWorker(t, wjs, slow, cluster.WorkerConfig{Route: "slow", Inflight: 3})
	runWorker(t, w)
	d := newDrawer(t, js, cluster.DrawerConfig{})
	m, err := d.Model("slow")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			text, err := m.Call(context.Background(), "x")
			assert.NoError(t, err)
			assert.Equal(t, "ok", text)
		})
	}
	wg.Wait()
	assert.Equal(t, int64(3), peak.Load(), "at most --inflight model calls at once, and that many")
	require.Eventually(t, func() bool { return w.Stats().Served == 12 }, 5*time.Second, 5*time.Millisecond)
}

// A job withdrawn while its worker draws it stops the model call.
func TestWithdrawalStopsTheWorkersCall(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	started, stopped := make(chan struct{}), make(chan error, 1)
	hang := maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		close(started)
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	_, wjs := connect(t, srv.ClientURL())
	w := newWorker(t, wjs, hang, cluster.WorkerConfig{Route: "hang"})
	runWorker(t, w)
	d := newDrawer(t, js, cluster.DrawerConfig{})
	m, err := d.Model("hang")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err = m.Call(ctx, "x")
	require.ErrorIs(t, err, context.Canceled)
	select {
	case cause := <-stopped:
		assert.ErrorContains(t, cause, "withdrawn")
	case <-time.After(10 * time.Second):
		t.Fatal("the worker's model call was not stopped")
	}
	require.Eventually(t, func() bool { return w.Stats().Withdrawn == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Zero(t, w.Stats().Served)
}

// The job carries the messages, the call options that change a reply and
// the sample identity; the reply carries text, tool calls, usage and a
// coded error back.
func TestJobsCarryWhatAWorkerNeeds(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	type seen struct {
		msgs []llms.MessageContent
		opts llms.CallOptions
		id   maker.SampleID
		ok   bool
	}
	got := make(chan seen, 2)
	rec := maker.ModelFunc(func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		o := llms.CallOptions{Temperature: 0.7, Model: "worker-model"}
		for _, fn := range opts {
			fn(&o)
		}
		id, ok := maker.SampleIDFrom(ctx)
		got <- seen{msgs, o, id, ok}
		if o.MaxTokens == 1 {
			return nil, &llms.Error{Code: llms.ErrCodeRateLimit, Message: "slow down", Details: map[string]any{"retry_after": 3}}
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
			Content: "text", StopReason: "tool_calls",
			ToolCalls:      []llms.ToolCall{{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "read", Arguments: `{"path":"a"}`}}},
			GenerationInfo: map[string]any{"PromptTokens": 12, "CompletionTokens": 5, "unencodable": func() {}},
		}}}, nil
	})
	_, wjs := connect(t, srv.ClientURL())
	runWorker(t, newWorker(t, wjs, rec, cluster.WorkerConfig{Route: "rec"}))
	d := newDrawer(t, js, cluster.DrawerConfig{})
	m, err := d.Model("rec")
	require.NoError(t, err)

	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "rules"),
		{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.TextPart(""), llms.TextPart("state")}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: "c0", Type: "function", FunctionCall: &llms.FunctionCall{Name: "list", Arguments: "{}"}}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c0", Name: "list", Content: "a b"}}},
	}
	tools := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "read", Description: "read a file", Parameters: map[string]any{"type": "object"}}}}
	ctx := maker.WithSampleID(context.Background(), maker.SampleID{Step: 41, Index: 2})
	resp, err := m.GenerateContent(ctx, msgs, llms.WithTemperature(0), llms.WithMaxTokens(750), llms.WithTools(tools), llms.WithStopWords([]string{"END"}), llms.WithModel("coordinator-model"))
	require.NoError(t, err)
	s := <-got
	assert.Equal(t, msgs, s.msgs, "every part, the empty text part too")
	assert.Equal(t, 0.0, s.opts.Temperature, "an explicit temperature 0 travels")
	assert.Equal(t, 750, s.opts.MaxTokens)
	assert.Equal(t, []string{"END"}, s.opts.StopWords)
	assert.Equal(t, "worker-model", s.opts.Model, "the worker's model is its own")
	require.Len(t, s.opts.Tools, 1)
	assert.Equal(t, "read", s.opts.Tools[0].Function.Name)
	assert.True(t, s.ok)
	assert.Equal(t, maker.SampleID{Step: 41, Index: 2}, s.id)

	c := resp.Choices[0]
	assert.Equal(t, "text", c.Content)
	assert.Equal(t, "tool_calls", c.StopReason)
	assert.Equal(t, []llms.ToolCall{{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "read", Arguments: `{"path":"a"}`}}}, c.ToolCalls)
	assert.Equal(t, 12.0, c.GenerationInfo["PromptTokens"])
	assert.NotContains(t, c.GenerationInfo, "unencodable")

	// No temperature given: none is sent, the worker's default stands.
	_, err = m.GenerateContent(context.Background(), msgs[:1], llms.WithMaxTokens(1))
	s = <-got
	assert.Equal(t, 0.7, s.opts.Temperature)
	assert.False(t, s.ok, "no sample identity given, none invented")
	require.ErrorIs(t, err, cluster.ErrRemote)
	assert.True(t, llms.IsRateLimitError(err), "a coded error keeps its code: %v", err)
	d2, ok := maker.RetryAfter(err)
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d2)
}

// Workers of two models form an ensemble across machines: each member's
// samples go to its own route, and the run equals a local ensemble's.
func TestEnsembleAcrossRoutes(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	a, b := simModel(t, 21), simModel(t, 22)
	for _, m := range []llms.Model{simModel(t, 21), simModel(t, 22)} {
		_, wjs := connect(t, srv.ClientURL())
		runWorker(t, newWorker(t, wjs, m, cluster.WorkerConfig{Inflight: 2}))
	}
	d := newDrawer(t, js, cluster.DrawerConfig{})
	ra, err := d.Model(a.Identity())
	require.NoError(t, err)
	rb, err := d.Model(b.Identity())
	require.NoError(t, err)
	local, err := maker.NewEnsemble(a, b)
	require.NoError(t, err)
	remote, err := maker.NewEnsemble(ra, rb)
	require.NoError(t, err)
	assert.Equal(t, local.Identity(), remote.Identity())
	want, wantSteps := solveHanoi(t, local, 4, vote.Config{K: 2})
	got, gotSteps := solveHanoi(t, remote, 4, vote.Config{K: 2})
	assert.Equal(t, wantSteps, gotSteps)
	assert.Equal(t, want.Models[0].Valid, got.Models[0].Valid)
	assert.Equal(t, want.Models[1].Valid, got.Models[1].Valid)
}

// A stopping worker lets its calls finish within the grace period and
// hands back the jobs of calls that do not, for another worker at once.
func TestWorkerStopsGracefully(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	release := make(chan struct{})
	var calls atomic.Int64
	gate := maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		calls.Add(1)
		select {
		case <-release:
			return maker.TextResponse("finished", "stop"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	d := newDrawer(t, js, cluster.DrawerConfig{})
	m, err := d.Model("gate")
	require.NoError(t, err)

	// Within the grace period: the call finishes and its reply is sent.
	_, wjs := connect(t, srv.ClientURL())
	runCtx, beginStop := context.WithCancel(context.Background())
	stop := runWorkerIn(t, runCtx, newWorker(t, wjs, gate, cluster.WorkerConfig{Route: "gate", Grace: 10 * time.Second}))
	var text string
	var wg sync.WaitGroup
	wg.Go(func() { text, err = m.Call(context.Background(), "x") })
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
	// The call ends a while after the stop began, whatever the machine's
	// speed: a release on a timer started before the stop could come
	// first on a loaded machine, and then prove nothing.
	context.AfterFunc(runCtx, func() { time.Sleep(100 * time.Millisecond); close(release) })
	beginStop()
	stop()
	wg.Wait()
	require.NoError(t, err)
	assert.Equal(t, "finished", text)

	// Beyond it: the job is handed back and another worker answers it.
	hang := maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		calls.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_, hjs := connect(t, srv.ClientURL())
	hw := newWorker(t, hjs, hang, cluster.WorkerConfig{Route: "gate", Grace: 50 * time.Millisecond, AckWait: time.Minute})
	stopHang := runWorker(t, hw)
	wg.Go(func() { text, err = m.Call(context.Background(), "y") })
	require.Eventually(t, func() bool { return calls.Load() == 2 }, 5*time.Second, 5*time.Millisecond)
	stopHang()
	assert.Equal(t, int64(1), hw.Stats().Released)
	_, ojs := connect(t, srv.ClientURL())
	ow := newWorker(t, ojs, gate, cluster.WorkerConfig{Route: "gate", AckWait: time.Minute})
	runWorker(t, ow)
	wg.Wait()
	require.NoError(t, err, "answered long before the ack wait of a minute")
	assert.Equal(t, "finished", text)
	assert.Equal(t, int64(1), ow.Stats().Redelivered)
}

// The server restarts on its store: queued work and journals are kept,
// clients reconnect and draw again.
func TestServerRestartKeepsTheWork(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: store})
	require.NoError(t, err)
	url := srv.ClientURL()
	_, js := connect(t, url)
	model := simModel(t, 9)
	_, wjs := connect(t, url)
	runWorker(t, newWorker(t, wjs, simModel(t, 9), cluster.WorkerConfig{Inflight: 2}))
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 20 * time.Second})
	remote, err := d.Model(model.Identity())
	require.NoError(t, err)
	want, _ := solveHanoi(t, model, 4, vote.Config{K: 3})

	ctx := context.Background()
	j, err := cluster.CreateJournal(ctx, js, "restart", cluster.JournalConfig{LeaseTTL: 30 * time.Second})
	require.NoError(t, err)
	task, err := hanoi.New(4)
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err = (&maker.Solver{
		Config:  maker.Config{Vote: vote.Config{K: 3}},
		Model:   remote,
		Journal: j,
		Progress: func(e maker.Event) {
			if e.Step == 6 {
				cancel()
			}
		},
	}).Solve(runCtx, task)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, j.Close())

	srv.Shutdown()
	srv, err = cluster.StartServer(cluster.ServerConfig{Addr: url[len("nats://"):], StoreDir: store})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)

	var j2 *journal.Journal
	require.Eventually(t, func() bool { // the clients reconnect
		j2, err = cluster.OpenJournal(ctx, js, "restart", cluster.JournalConfig{})
		return err == nil
	}, 20*time.Second, 100*time.Millisecond)
	task2, err := hanoi.New(4)
	require.NoError(t, err)
	got, err := (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3, MaxErrors: 50}}, Model: remote, Journal: j2}).Solve(ctx, task2)
	require.NoError(t, err)
	require.NoError(t, j2.Close())
	assert.True(t, task2.Solved())
	assert.Equal(t, 7, got.Resumed)
	assert.Equal(t, want.Steps, got.Steps)
	assert.Equal(t, want.Valid, got.Valid)
	require.NoError(t, d.Close(), "before the server's cleanup")
}

// slowSim is a simulated model whose every call takes d first.
type slowSim struct {
	*sim.Model
	d time.Duration
}

func (m slowSim) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	select {
	case <-time.After(m.d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

// TestSlowModelKeepsItsJob: docs/nats.md (and `maker worker --help`) say a
// live worker "reports progress every third of" its ack wait, "however
// long its model takes". A model call of two ack waits is answered by the
// worker that took it: the job is never redelivered to the other worker of
// the route, and is served once. The ack wait is deadTTL,
// not 1 s: a report every third of 1 s is late past the ack wait on a
// loaded machine's stall, and the job redelivered from a live worker.
func TestSlowModelKeepsItsJob(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	model := simModel(t, 5)
	var workers []*cluster.Worker
	for range 2 {
		_, wjs := connect(t, srv.ClientURL())
		w := newWorker(t, wjs, slowSim{model, 2 * deadTTL}, cluster.WorkerConfig{AckWait: deadTTL, Inflight: 1})
		runWorker(t, w)
		workers = append(workers, w)
	}
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(model.Identity())
	require.NoError(t, err)
	task, err := hanoi.New(4)
	require.NoError(t, err)
	ctx := maker.WithSampleID(context.Background(), maker.SampleID{Step: 0, Index: 1})
	_, err = remote.GenerateContent(ctx, task.Messages(), llms.WithMaxTokens(750))
	require.NoError(t, err)
	served := func() (n int64) {
		for _, w := range workers {
			n += w.Stats().Served
		}
		return n
	}
	require.Eventually(t, func() bool { return served() == 1 }, 5*time.Second, 5*time.Millisecond, "served once")
	// A redelivery would have come an ack wait after the first worker
	// took the job, long before its call ended.
	for i, w := range workers {
		assert.Zero(t, w.Stats().Redelivered, "worker %d: %+v", i, w.Stats())
	}
}

// logRecords is a slog handler that keeps the records at or above its
// level, for a test to read.
type logRecords struct {
	level slog.Level
	mu    sync.Mutex
	recs  []logRecord
}

// logRecord is a record's level, message and attributes as text.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (h *logRecords) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *logRecords) WithGroup(string) slog.Handler                { return h }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool { rec.attrs[a.Key] = a.Value.String(); return true })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, rec)
	return nil
}

func (h *logRecords) all() []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.recs)
}

// TestWorkerLogsItsJobs: WorkerConfig.Logger gets "each redelivered job
// the worker takes (Info), and each job's start and end (Debug)", and
// docs/nats.md's --log-level says which: at debug a worker logs "took a
// job" and "job done" with the job's outcome; at info only "took a
// redelivered job", which a job handed back by a stopping worker is too
// (not only one of a worker that died or stalled).
func TestWorkerLogsItsJobs(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{})
	m, err := d.Model("logged")
	require.NoError(t, err)
	answer := maker.ModelFunc(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		return maker.TextResponse("ok", "stop"), nil
	})
	var calls atomic.Int64
	hang := maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		calls.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	})

	// At info, a job taken the first time and answered logs nothing.
	info := &logRecords{level: slog.LevelInfo}
	_, ijs := connect(t, srv.ClientURL())
	stopInfo := runWorker(t, newWorker(t, ijs, answer, cluster.WorkerConfig{Route: "logged", Logger: slog.New(info)}))
	_, err = m.Call(context.Background(), "first")
	require.NoError(t, err)
	stopInfo()
	assert.Empty(t, info.all(), "nothing at info for a job answered the first time")

	// At debug, a job's start and its end; stopped past its grace, the
	// worker hands the job back.
	debug := &logRecords{level: slog.LevelDebug}
	_, hjs := connect(t, srv.ClientURL())
	stopHang := runWorker(t, newWorker(t, hjs, hang, cluster.WorkerConfig{Route: "logged", Grace: 50 * time.Millisecond, AckWait: time.Minute, Logger: slog.New(debug)}))
	var wg sync.WaitGroup
	var text string
	wg.Go(func() { text, err = m.Call(context.Background(), "second") })
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	stopHang()
	recs := debug.all()
	require.Len(t, recs, 2, "%+v", recs)
	job := recs[0].attrs["job"]
	require.NotEmpty(t, job)
	assert.Equal(t, logRecord{slog.LevelDebug, "took a job", map[string]string{"job": job, "samples": "1", "deliveries": "1"}}, recs[0])
	assert.Equal(t, logRecord{slog.LevelDebug, "job done", map[string]string{"job": job, "outcome": "handed back"}}, recs[1])

	// The next worker, at info, takes that job redelivered and says so
	// (long before the ack wait of a minute: it was handed back).
	next := &logRecords{level: slog.LevelInfo}
	_, njs := connect(t, srv.ClientURL())
	runWorker(t, newWorker(t, njs, answer, cluster.WorkerConfig{Route: "logged", AckWait: time.Minute, Logger: slog.New(next)}))
	wg.Wait()
	require.NoError(t, err)
	assert.Equal(t, "ok", text)
	assert.Equal(t, []logRecord{{slog.LevelInfo, "took a redelivered job", map[string]string{"job": job, "deliveries": "2"}}}, next.all())
}

// TestAWithdrawalThroughAnotherAgentStopsTheCall (review19, medium): a
// Drawer's withdrawal reaches one agent of the queue group, and a
// worker's notice is only a cue to ask the agent holding its delivery
// (review18): with two agents, 2 of 6 withdrawn calls ran on. The agent
// that records a withdrawal tells the others (peerNews).
func TestAWithdrawalThroughAnotherAgentStopsTheCall(t *testing.T) {
	t.Parallel()
	url, dir := engineWithTwoAgents(t, cluster.ProvisionConfig{AckWait: 2 * time.Second})

	const n = 6
	var started, stopped atomic.Int32
	hang := maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		started.Add(1)
		<-ctx.Done()
		stopped.Add(1)
		return nil, ctx.Err()
	})
	_, wjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleWorker))
	w := newWorker(t, wjs, hang, cluster.WorkerConfig{Inflight: n})
	runWorker(t, w)
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 60 * time.Second})
	m, err := d.Model(w.Route())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { _, _ = m.Call(ctx, "x") })
	}
	require.Eventually(t, func() bool { return started.Load() == n }, 20*time.Second, 10*time.Millisecond)
	cancel()
	wg.Wait()
	time.Sleep(5 * time.Second) // the notices, and 7 heartbeats of each job
	t.Logf("drawer %+v; worker %+v", d.Stats(), w.Stats())
	assert.Equal(t, int32(n), stopped.Load(), "every withdrawn job's model call stopped")
}
