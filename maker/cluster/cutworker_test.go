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
// timeout, with one agent and with two (a lost act reaching the agent
// that did not serve the pull is passed to the one that did). Before,
// each lost job waited out the ack wait, and struck the worker's room,
// down to none.
func TestAWorkersCutConnectionCostsNoAckWait(t *testing.T) {
	t.Parallel()
	t.Run("one agent", func(t *testing.T) { t.Parallel(); cutWorker(t, false) })
	t.Run("two agents", func(t *testing.T) { t.Parallel(); cutWorker(t, true) })
}

func cutWorker(t *testing.T, twoAgents bool) {
	slow := sim.DefaultConfig() // simModel's, each call 20 ms: a run long enough to cut
	slow.Seed, slow.P, slow.FlagRate, slow.ErrorRate, slow.Latency = 5, 0.85, 0.05, 0.01, sim.FixedLatency(20*time.Millisecond)
	m, err := sim.New(hanoi.Oracle{}, slow)
	require.NoError(t, err)
	a := newRouteAttack(t, m, cluster.WorkerConfig{Inflight: 4})
	if twoAgents { // a pull, and its lost act, may reach either
		anc, _ := connectAs(t, a.url, cluster.SeedFile(a.dir, cluster.RoleAdmin))
		second, err := cluster.ServeAgent(context.Background(), anc, cluster.ProvisionConfig{})
		require.NoError(t, err)
		t.Cleanup(second.Stop)
	}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 4, a.cfg)
	d, remote := a.victim(t)

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
			if a.wnc.ForceReconnect() == nil {
				cuts.Add(1)
			}
		}
	})
	start := time.Now()
	gotSteps, err := solveHanoiIn(ctx, remote, 4, a.cfg)
	took := time.Since(start)
	stop()
	wg.Wait()
	require.NoError(t, err, "drawer %+v, worker %+v", d.Stats(), a.worker.Stats())
	t.Logf("%d cuts; the run took %s; drawer %+v, worker %+v", cuts.Load(), took.Round(time.Millisecond), d.Stats(), a.worker.Stats())
	require.Positive(t, cuts.Load(), "the worker's connection was cut during the run")
	assert.Equal(t, winners(wantSteps), winners(gotSteps))
	assert.Zero(t, d.Stats().Withdrawn, "no call waited out its timeout")
	assert.Less(t, took, cluster.DefaultAckWait, "no job waited out the ack wait")
}
