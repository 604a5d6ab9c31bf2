package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestAStoppedWorkersPullTakesNoJob (review11, medium): a worker that
// stopped (its Run's context ended: SIGTERM, a rolling restart) left its
// pull through the engine's agent (up to --inflight jobs, waiting up to
// a second) unread, and the jobs the agent forwarded meanwhile waited out
// the engine's ack wait (10 s) and spent a delivery: 8 calls made right
// after a worker of 64 places stopped took 10.1 to 10.3 s, beside a
// second worker with room. The pull is now read to its end and each job
// in it handed back at once: within 5 s (0.05 to 0.2 s here).
func TestAStoppedWorkersPullTakesNoJob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	aSeed, err := cluster.AddWorker(dir, "a")
	require.NoError(t, err)
	bSeed, err := cluster.AddWorker(dir, "b")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	_, ajs := connectAs(t, url, aSeed)
	_, bjs := connectAs(t, url, bSeed)
	a := newWorker(t, ajs, simModel(t, 5), cluster.WorkerConfig{Inflight: 64})
	b := newWorker(t, bjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 8})
	stopA := runWorker(t, a)
	runWorker(t, b)
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(a.Route())
	require.NoError(t, err)
	call := func(i int) {
		_, _ = remote.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprint("call ", i))})
	}
	call(-1)                            // both workers serve
	time.Sleep(1500 * time.Millisecond) // their pulls wait for jobs

	stopA()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for i := range 8 {
		wg.Go(func() {
			call(i)
			mu.Lock()
			slowest = max(slowest, time.Since(start))
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("8 calls right after a worker stopped: the slowest took %s; drawer %+v; stopped worker %+v; other worker %+v", slowest, d.Stats(), a.Stats(), b.Stats())
	assert.Less(t, slowest, 5*time.Second, "no call waits out the ack wait for a worker that stopped gracefully")
}
