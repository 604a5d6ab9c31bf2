package cluster_test

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// seenCall is what a worker's model was called with.
type seenCall struct {
	ID     maker.SampleID
	Temp   float64
	Seed   int
	Prompt string
}

// recorder is a model that answers "a" and records its calls.
func recorder() (llms.Model, func() []seenCall) {
	var mu sync.Mutex
	var calls []seenCall
	m := maker.ModelFunc(func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		o := llms.CallOptions{}
		for _, fn := range opts {
			fn(&o)
		}
		id, _ := maker.SampleIDFrom(ctx)
		mu.Lock()
		calls = append(calls, seenCall{id, o.Temperature, o.Seed, msgs[len(msgs)-1].Parts[0].(llms.TextContent).Text})
		mu.Unlock()
		return maker.TextResponse("a", "stop"), nil
	})
	return m, func() []seenCall {
		mu.Lock()
		defer mu.Unlock()
		out := append([]seenCall(nil), calls...)
		sort.Slice(out, func(i, j int) bool { return out[i].ID.Index < out[j].ID.Index })
		return out
	}
}

// The samples of a wave travel as one job (the prompt once) and come
// back in one reply, each with its own identity and options: the worker's
// model sees exactly the calls it would see one job per sample.
func TestAWaveIsOneJob(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	model, seen := recorder()
	_, wjs := connect(t, srv.ClientURL())
	w := newWorker(t, wjs, model, cluster.WorkerConfig{Route: "rec", Inflight: 5})
	runWorker(t, w)
	// A long gather: the wave's five calls always arrive, however loaded
	// the machine, so the count below does not depend on timing.
	d := newDrawer(t, js, cluster.DrawerConfig{Gather: time.Minute})
	remote, err := d.Model("rec")
	require.NoError(t, err)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "rules"), llms.TextParts(llms.ChatMessageTypeHuman, "state 7")}
	res, err := vote.Race(context.Background(), vote.Config{K: 5, Parallel: 5}, func(ctx context.Context, i int) vote.Sample[string] {
		temp := 0.7
		if i == 0 {
			temp = 0
		}
		ctx = maker.WithSampleID(ctx, maker.SampleID{Step: 7, Index: i})
		text, err := llms.GenerateFromSinglePrompt(ctx, callMsgs{remote, msgs}, "", llms.WithTemperature(temp), llms.WithSeed(i+1), llms.WithMaxTokens(50))
		return vote.Sample[string]{Value: text, Key: uint64(len(text)), Err: err}
	})
	require.NoError(t, err)
	assert.Equal(t, "a", res.Winner)

	st := d.Stats()
	assert.Equal(t, int64(1), st.Published, "one job for the wave: %+v", st)
	assert.Equal(t, int64(5), st.Samples)
	assert.Equal(t, int64(1), st.Replies, "one reply for the wave")
	want := make([]seenCall, 5)
	for i := range want {
		want[i] = seenCall{maker.SampleID{Step: 7, Index: i}, 0.7, i + 1, "state 7"}
	}
	want[0].Temp = 0
	assert.Equal(t, want, seen(), "each sample its own identity, seed and temperature")
	require.Eventually(t, func() bool { return w.Stats().Served == 5 }, 5*time.Second, 5*time.Millisecond)
}

// callMsgs sends its prompt whatever the prompt string: a wave's calls
// share it.
type callMsgs struct {
	m    llms.Model
	msgs []llms.MessageContent
}

func (c callMsgs) GenerateContent(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	return c.m.GenerateContent(ctx, c.msgs, opts...)
}

func (c callMsgs) Call(ctx context.Context, p string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, p, opts...)
}

// A worker pulls for all its free places with one request (Fetch(n)), not
// one request per place.
func TestWorkerPullsOnceForAllItsPlaces(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	model, _ := recorder()
	_, wjs := connect(t, srv.ClientURL())
	runWorker(t, newWorker(t, wjs, model, cluster.WorkerConfig{Route: "rec", Inflight: 8}))
	ctx := context.Background()
	waiting := func() int {
		c, err := wjs.Consumer(ctx, cluster.JobsStream, "w-"+cluster.RouteToken("rec"))
		require.NoError(t, err)
		info, err := c.Info(ctx)
		require.NoError(t, err)
		return info.NumWaiting
	}
	require.Eventually(t, func() bool { return waiting() == 1 }, 5*time.Second, 10*time.Millisecond)
	// Over several pull periods, never more than one request at a time
	// while every place is free.
	for range 20 {
		assert.LessOrEqual(t, waiting(), 1)
		time.Sleep(50 * time.Millisecond)
	}
}

// A wave larger than MaxJobSamples is split into jobs of at most that
// many samples; every sample is still drawn once.
func TestALargeWaveIsSplit(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	model, seen := recorder()
	_, wjs := connect(t, srv.ClientURL())
	runWorker(t, newWorker(t, wjs, model, cluster.WorkerConfig{Route: "rec", Inflight: 16}))
	d := newDrawer(t, js, cluster.DrawerConfig{Gather: time.Minute})
	remote, err := d.Model("rec")
	require.NoError(t, err)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "state 1")}
	n := cluster.MaxJobSamples + 2
	_, err = vote.Race(context.Background(), vote.Config{K: n, Parallel: n}, func(ctx context.Context, i int) vote.Sample[string] {
		ctx = maker.WithSampleID(ctx, maker.SampleID{Step: 1, Index: i})
		text, err := llms.GenerateFromSinglePrompt(ctx, callMsgs{remote, msgs}, "")
		return vote.Sample[string]{Value: text, Key: 1, Err: err}
	})
	require.NoError(t, err)
	st := d.Stats()
	assert.Equal(t, int64(2), st.Published, "%+v", st)
	assert.Equal(t, int64(n), st.Samples)
	got := seen()
	require.Len(t, got, n)
	for i, c := range got {
		assert.Equal(t, maker.SampleID{Step: 1, Index: i}, c.ID)
	}
}

// A call of a wave that stops waiting (its own context ended) does not
// withdraw the job while the wave's other calls wait: they get their
// answers, and nothing is withdrawn.
func TestOneCallLeavingDoesNotWithdrawItsWave(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	var started atomic.Int64
	release := make(chan struct{})
	gate := maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		started.Add(1)
		select {
		case <-release:
			return maker.TextResponse("a", "stop"), nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	})
	_, wjs := connect(t, srv.ClientURL())
	w := newWorker(t, wjs, gate, cluster.WorkerConfig{Route: "gate", Inflight: 3})
	runWorker(t, w)
	d := newDrawer(t, js, cluster.DrawerConfig{Gather: time.Minute})
	remote, err := d.Model("gate")
	require.NoError(t, err)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "state")}
	left := make(chan struct{})
	res, err := vote.Race(context.Background(), vote.Config{K: 3, Parallel: 3}, func(ctx context.Context, i int) vote.Sample[string] {
		ctx = maker.WithSampleID(ctx, maker.SampleID{Step: 2, Index: i})
		if i == 2 { // this call gives up once the wave is on the worker
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			go func() {
				for started.Load() < 3 {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
			defer close(left)
		}
		if i == 0 {
			go func() { <-left; close(release) }()
		}
		text, err := llms.GenerateFromSinglePrompt(ctx, callMsgs{remote, msgs}, "")
		return vote.Sample[string]{Value: text, Key: 1, Err: err}
	})
	require.NoError(t, err)
	assert.Equal(t, "a", res.Winner)
	assert.Equal(t, 1, res.Errors, "the call that left")
	st := d.Stats()
	assert.Zero(t, st.Withdrawn, "the wave's other calls still waited: %+v", st)
	assert.Equal(t, int64(2), st.Replies, "the wave's job and the next wave's")
	assert.Zero(t, w.Stats().Withdrawn)
}

// Jobs and replies live in memory: a server restart loses the jobs
// queued, and their coordinator asks them again once reconnected. The
// sample arrives, the same as drawn in process; nothing is lost or
// counted twice.
func TestJobLostToARestartIsAskedAgain(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: store})
	require.NoError(t, err)
	url := srv.ClientURL()
	local := simModel(t, 4)
	_, js := connect(t, url)
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 20 * time.Second, NoWorker: -1})
	remote, err := d.Model(local.Identity())
	require.NoError(t, err)
	task, err := hanoi.New(3)
	require.NoError(t, err)
	ctx := maker.WithSampleID(context.Background(), maker.SampleID{Step: 0, Index: 1})
	var got *llms.ContentResponse
	var callErr error
	var wg sync.WaitGroup
	wg.Go(func() { got, callErr = remote.GenerateContent(ctx, task.Messages(), llms.WithMaxTokens(750)) })
	// The job is queued (no worker yet) when the server goes.
	require.Eventually(t, func() bool { return d.Stats().Published == 1 }, 10*time.Second, 5*time.Millisecond)
	srv.Shutdown()
	srv, err = cluster.StartServer(cluster.ServerConfig{Addr: url[len("nats://"):], StoreDir: store})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	_, wjs := connect(t, url)
	runWorker(t, newWorker(t, wjs, simModel(t, 4), cluster.WorkerConfig{}))
	wg.Wait()
	require.NoError(t, callErr, "asked again, not waited out")
	want, err := local.GenerateContent(ctx, task.Messages(), llms.WithMaxTokens(750))
	require.NoError(t, err)
	assert.Equal(t, want.Choices[0].Content, got.Choices[0].Content, "the same sample")
	// Reasked counts when the server acknowledges the job asked again,
	// and the job's reply may come first.
	require.Eventually(t, func() bool { return d.Stats().Reasked == 1 }, 10*time.Second, 5*time.Millisecond, "%+v", d.Stats())
	require.NoError(t, d.Close(), "before the server's cleanup")
	st := d.Stats()
	assert.Equal(t, int64(1), st.Reasked, "%+v", st)
	assert.Equal(t, int64(1), st.Replies)
}
