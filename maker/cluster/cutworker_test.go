package cluster_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAWorkersCutConnectionCostsNoAckWait (CI34: a cluster node killed
// under an honest worker, or the agent): what the agent sent a worker
// while its connection was down never came. The worker tells the agent
// which of its pull's jobs did (a lost act) and the agent hands back the
// rest at once, with no strike against its room of held jobs: a run whose
// only worker's connection is cut a dozen times has an undisturbed
// run's winners within one ack wait, none of its calls waiting out its
// timeout. Before, each lost job waited out the ack wait, and struck the
// worker's room, down to none.
func TestAWorkersCutConnectionCostsNoAckWait(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 4, cfg)
	wnc, wjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleWorker))
	slow := sim.DefaultConfig() // simModel's, each call 20 ms: a run long enough to cut
	slow.Seed, slow.P, slow.FlagRate, slow.ErrorRate, slow.Latency = 5, 0.85, 0.05, 0.01, sim.FixedLatency(20*time.Millisecond)
	m, err := sim.New(hanoi.Oracle{}, slow)
	require.NoError(t, err)
	worker := newWorker(t, wjs, m, cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: time.Minute})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cctx, stop := context.WithCancel(ctx)
	var cuts atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for cctx.Err() == nil && cuts.Load() < 12 {
			select {
			case <-cctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			if wnc.ForceReconnect() == nil {
				cuts.Add(1)
			}
		}
	})
	start := time.Now()
	gotSteps, err := solveHanoiIn(ctx, remote, 4, cfg)
	took := time.Since(start)
	stop()
	wg.Wait()
	require.NoError(t, err, "drawer %+v, worker %+v", d.Stats(), worker.Stats())
	t.Logf("%d cuts; the run took %s; drawer %+v, worker %+v", cuts.Load(), took.Round(time.Millisecond), d.Stats(), worker.Stats())
	require.Positive(t, cuts.Load(), "the worker's connection was cut during the run")
	assert.Equal(t, winners(wantSteps), winners(gotSteps))
	assert.Zero(t, d.Stats().Withdrawn, "no call waited out its timeout")
	assert.Less(t, took, cluster.DefaultAckWait, "no job waited out the ack wait")
}
