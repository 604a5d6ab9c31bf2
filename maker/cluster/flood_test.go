package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// floodBytes is the sample streams' bound in the flood tests.
const floodBytes = 1 << 20

// startFloodServer starts an engine with roles whose sample streams hold
// floodBytes, serving two routes (more would leave a key less than one
// job of the largest size in half the job stream).
func startFloodServer(t *testing.T) (string, seeds) {
	t.Helper()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{SampleBytes: floodBytes, MaxRoutes: 2}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL(), seeds{
		coord: cluster.SeedFile(dir, cluster.RoleCoordinator), worker: cluster.SeedFile(dir, cluster.RoleWorker),
		rogue: cluster.SeedFile(dir, cluster.RoleWorker), admin: cluster.SeedFile(dir, cluster.RoleAdmin),
	}
}

// flushThroughReconnects flushes nc, again after a reconnect: a flood
// on a loaded machine can block a write past the client's write timeout
// (Connect's FlusherTimeout), the client then reconnects, and nats.go
// tells a Flush waiting meanwhile "connection closed" though the
// connection goes on (CI saw it once under a load of 14).
func flushThroughReconnects(t *testing.T, nc *nats.Conn) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := nc.Flush()
		if err == nil {
			return
		}
		if nc.IsClosed() || time.Now().After(deadline) {
			require.NoError(t, err, "flush (closed: %v)", nc.IsClosed())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReplyFloodStallsNoRun: a worker floods the reply stream with
// replies nobody consumes, many times its size, before and during a run
// (issue 35, attack 5): the run ends with the winners of an undisturbed
// run. With the stream discarding new messages when full, the run stalls.
func TestReplyFloodStallsNoRun(t *testing.T) {
	t.Parallel()
	url, s := startFloodServer(t)
	floodScenario(t, url, s)
}

func floodScenario(t *testing.T, url string, s seeds) {
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 3, cfg)
	_, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	rogue, _ := connectAs(t, url, s.rogue)
	id := identityOf(rogue) // a worker replies under its own identity only
	// The coordinator is connected before the flood, as the worker is: a
	// dial under the flood on a loaded machine can outlast the client's
	// dial timeout (load 22: "i/o timeout"), and what is shown is a run
	// under the flood, not a connection made during it.
	_, cjs := connectAs(t, url, s.coord)

	// Small replies, so the stream is full to its last hundred bytes.
	junk := []byte(strings.Repeat("x", 100))
	var sent atomic.Int64
	flood := func(ctx context.Context) {
		for i := 0; ctx.Err() == nil; i++ {
			if rogue.Publish(fmt.Sprintf("mdap.replies.flood.%d.%s", i, id), junk) == nil {
				sent.Add(int64(len(junk)))
			}
			if i%1024 == 1023 {
				_ = rogue.Flush()
				time.Sleep(time.Millisecond) // a flood, not a CPU hog
			}
		}
	}
	// Full before the run begins, and flooded all along.
	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for sent.Load() < 2*floodBytes {
		if rogue.Publish(fmt.Sprintf("mdap.replies.flood.pre%d.%s", sent.Load(), id), junk) == nil {
			sent.Add(int64(len(junk)))
		}
	}
	flushThroughReconnects(t, rogue)
	wg.Go(func() { flood(fctx) })

	before := sent.Load()
	// The engine's default timeout (2 minutes), not a shorter one: under
	// the flood on a loaded machine a reply's publication can outlast the
	// worker's publish timeout (10 s; its job is handed back and answered
	// again, its reply late, not lost), and a coordinator's timeout of
	// 20 s, two such attempts, timed the sample out (load 20: 1 of 20
	// runs, drawer {Published:17 Replies:16 Duplicates:1 Withdrawn:1},
	// worker {Released:4 Redelivered:3}). A reply lost for good still
	// fails the run's counts, after that timeout.
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: cluster.DefaultTimeout})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	_, gotSteps := solveHanoi(t, remote, 3, cfg)
	assert.Equal(t, wantSteps, gotSteps, "drawer %+v, worker %+v", d.Stats(), worker.Stats())
	assert.Greater(t, sent.Load()-before, int64(floodBytes/4), "the flood went on during the run")
}

// TestFullJobStreamFailsFastNamingIt: the admin fills the job stream
// with jobs for a route nobody pulls (one key cannot:
// TestOneKeyCannotFillTheJobStream); a coordinator's sample then fails at
// once with an error naming the stream and that it is full, not after
// its timeout.
func TestFullJobStreamFailsFastNamingIt(t *testing.T) {
	t.Parallel()
	url, s := startFloodServer(t)
	fullScenario(t, url, s)
}

func fullScenario(t *testing.T, url string, s seeds) {
	_, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{})
	runWorker(t, worker)
	flooder, ajs := connectAs(t, url, s.admin)
	idle := idleRouteSubject(t, ajs, flooder)
	// Small jobs, so the stream is full to its last hundred bytes, each
	// on a subject of its own (a subject holds a few only).
	junk := []byte(strings.Repeat("x", 100))
	for i := 0; i < 2*floodBytes/len(junk); i++ {
		require.NoError(t, flooder.Publish(fmt.Sprintf("%s%d", idle, i), junk))
	}
	flushThroughReconnects(t, flooder)

	_, cjs := connectAs(t, url, s.coord)
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: time.Minute})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	began := time.Now()
	_, err = remote.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	require.ErrorIs(t, err, cluster.ErrEngine)
	assert.Contains(t, err.Error(), cluster.JobsStream)
	assert.Contains(t, err.Error(), "full")
	assert.Less(t, time.Since(began), 15*time.Second, "not the minute of its timeout")
}
