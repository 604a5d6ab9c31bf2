package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engineWithTwoAgents starts an engine with roles and settings engine,
// and a second agent beside its own (a second maker nats provision),
// both stopped when the test ends: its URL and its credentials' folder.
func engineWithTwoAgents(t *testing.T, engine cluster.ProvisionConfig) (url, dir string) {
	t.Helper()
	dir = t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, Provision: engine})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url = srv.ClientURL()
	anc, _ := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleAdmin))
	actx, acancel := context.WithCancel(context.Background())
	t.Cleanup(acancel)
	second, err := cluster.ServeAgent(actx, anc, engine)
	require.NoError(t, err)
	t.Cleanup(second.Stop)
	return url, dir
}

// TestAnActReachingAnotherAgentIsDone: two agents serve one engine (a
// second maker nats provision; they share the requests), so a worker's
// acknowledgement often reaches the agent that did not deliver its job.
// That agent asks the others, and the one holding the delivery acts on it
// (still only for the worker it went to): a run is an undisturbed run,
// with no job redelivered. (Before, the act was refused, and the job came
// back after its ack wait, its reply counted once.)
func TestAnActReachingAnotherAgentIsDone(t *testing.T) {
	t.Parallel()
	engine := cluster.ProvisionConfig{AckWait: 2 * time.Second}
	url, dir := engineWithTwoAgents(t, engine)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 3, cfg)
	_, wjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleWorker))
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	got, err := solveHanoiIn(ctx, remote, 3, cfg)
	require.NoError(t, err)
	assert.Equal(t, wantSteps, got)
	// The last acknowledgements land after the last reply: give a job
	// refused its ack wait to come back.
	time.Sleep(engine.AckWait + time.Second)
	st := worker.Stats()
	t.Logf("worker %+v, drawer %+v", st, d.Stats())
	assert.Zero(t, st.Redelivered, "no job redelivered for want of its acknowledgement")
	assert.Zero(t, d.Stats().Duplicates, "no reply twice")
}
