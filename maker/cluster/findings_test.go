package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// With no worker on the route, a sample fails with ErrNoWorker after
// NoWorker, not after the whole Timeout; the route's next sample fails at
// once; and once a worker serves the route, samples are drawn again.
func TestNoWorkerIsNoticedQuickly(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: time.Minute, NoWorker: 500 * time.Millisecond})
	m, err := d.Model("quick")
	require.NoError(t, err)
	ctx := context.Background()
	start := time.Now()
	_, err = m.Call(ctx, "hi")
	require.ErrorIs(t, err, cluster.ErrNoWorker)
	require.ErrorIs(t, err, cluster.ErrNoReply)
	assert.Contains(t, err.Error(), "maker worker")
	assert.Less(t, time.Since(start), 20*time.Second, "well before the minute of Timeout")
	// At once: before its job is published, so it waits for no worker
	// (a time bound would fail on a loaded machine: 1.4 s was seen).
	published := d.Stats().Published
	_, err = m.Call(ctx, "hi")
	require.ErrorIs(t, err, cluster.ErrNoWorker)
	assert.Equal(t, published, d.Stats().Published, "the next sample fails at once, without a job")
	require.Eventually(t, func() bool { return d.Stats().Withdrawn == 1 }, 5*time.Second, 10*time.Millisecond)

	_, wjs := connect(t, srv.ClientURL())
	runWorker(t, newWorker(t, wjs, slowModel(0), cluster.WorkerConfig{Route: "quick"}))
	require.Eventually(t, func() bool {
		_, err := m.Call(ctx, "hi")
		return err == nil
	}, 20*time.Second, 100*time.Millisecond, "a worker that starts serves the route")
}

// A worker on a slow model is not mistaken for no worker: it holds the
// job.
func TestBusyWorkerIsAWorker(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: time.Minute, NoWorker: 300 * time.Millisecond})
	_, wjs := connect(t, srv.ClientURL())
	w := newWorker(t, wjs, slowModel(2*time.Second), cluster.WorkerConfig{Route: "slow"})
	runWorker(t, w)
	m, err := d.Model("slow")
	require.NoError(t, err)
	text, err := m.Call(context.Background(), "hi")
	require.NoError(t, err)
	assert.Equal(t, "slow", text)
}

// A server without JetStream: the message says so and how to fix it.
func TestServerWithoutJetStreamIsNamed(t *testing.T) {
	t.Parallel()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	ns.Start()
	defer ns.Shutdown()
	require.True(t, ns.ReadyForConnections(10*time.Second))
	// As connect does: a loaded machine's server greeted this client
	// after Connect's 2 s ("read tcp ...: i/o timeout", at a load of 25).
	nc, err := cluster.Connect(ns.ClientURL(), t.Name(), nats.Timeout(30*time.Second))
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = cluster.NewDrawer(ctx, js, cluster.DrawerConfig{})
	require.ErrorIs(t, err, cluster.ErrNoJetStream)
	assert.Contains(t, err.Error(), "-js")
	_, err = cluster.CreateJournal(ctx, js, "r", cluster.JournalConfig{})
	require.ErrorIs(t, err, cluster.ErrNoJetStream)
	_, err = cluster.NewWorker(ctx, js, simModel(t, 1), cluster.WorkerConfig{})
	require.ErrorIs(t, err, cluster.ErrNoJetStream)
}

// slowModel answers "slow" after d.
func slowModel(d time.Duration) llms.Model {
	return maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return maker.TextResponse("slow", "stop"), nil
	})
}
