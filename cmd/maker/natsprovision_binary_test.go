package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startStockLike runs, in the test, a NATS server configured as
// docs/nats.md configures a stock nats-server: JetStream, and the
// accounts block of the roles' keys (cluster.StockAuthConfig); nothing
// provisioned. It returns the URL and the credentials folder.
func startStockLike(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "creds")
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	opts := &natsserver.Options{}
	require.NoError(t, opts.ProcessConfigString(cluster.StockAuthConfig(keys)))
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, t.TempDir(), true, true
	ns, err := natsserver.NewServer(opts)
	require.NoError(t, err)
	ns.Start()
	t.Cleanup(ns.Shutdown)
	require.True(t, ns.ReadyForConnections(10*time.Second))
	return ns.ClientURL(), dir
}

// TestBinaryNATSProvision: on an unprovisioned server with mdap's roles,
// a worker cannot start (it may create nothing); maker nats provision
// --once creates the streams, the bucket and a --route's consumer with
// the engine's settings; maker nats provision then serves workers'
// requests, so a worker and a run work; SIGTERM stops it with exit 0.
// Bad settings exit 2.
func TestBinaryNATSProvision(t *testing.T) {
	t.Parallel()
	url, dir := startStockLike(t)
	setChildEnv(t, cluster.CredsEnv, dir)
	for _, args := range [][]string{
		{"--max-deliver", "1"}, {"--ack-wait", "100ms"}, {"--replicas", "0"}, {"--route", ""},
	} {
		c := start(t, nil, append([]string{"nats", "provision", "--nats", url}, args...)...)
		assert.Equal(t, 2, c.wait(t, 30*time.Second), "%v: %s", args, c.stderr.String())
	}

	// More replicas than the server has nodes: a clear usage error, not
	// JetStream's words alone.
	three := start(t, nil, "nats", "provision", "--once", "--nats", url, "--replicas", "3")
	assert.Equal(t, 2, three.wait(t, 30*time.Second), three.stderr.String())
	assert.Contains(t, three.stderr.String(), "Replicas = 3: the server cannot place 3 copies")
	assert.Contains(t, three.stderr.String(), "at most the number of JetStream nodes of the cluster")

	w := start(t, nil, append([]string{"worker", "--nats", url}, natsSim...)...)
	assert.Equal(t, 1, w.wait(t, time.Minute), "a worker on an unprovisioned engine: %s", w.stderr.String())
	assert.Contains(t, w.stderr.String(), "maker nats provision")

	once := start(t, nil, "nats", "provision", "--once", "--nats", url, "--route", "some-model", "--ack-wait", "2s")
	require.Equal(t, 0, once.wait(t, time.Minute), once.stderr.String())
	assert.Contains(t, once.stdout.String(), "provisioned the streams MDAP_JOBS, MDAP_REPLIES, MDAP_JOURNALS, MDAP_TASKS and the buckets MDAP_LEASES, MDAP_RESULTS (1 replicas)")
	assert.Contains(t, once.stdout.String(), `provisioned the consumer of route "some-model"`)
	js := connectRole(t, url, cluster.RoleAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	assert.Equal(t, jetstream.FileStorage, st.CachedInfo().Config.Storage, "--durable is the default")
	cons, err := js.Consumer(ctx, cluster.JobsStream, "w-"+cluster.RouteToken("some-model"))
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, cons.CachedInfo().Config.AckWait)

	out, err := os.Create(filepath.Join(t.TempDir(), "provision.out"))
	require.NoError(t, err)
	defer out.Close()
	agent := start(t, out, "nats", "provision", "--nats", url, "--ack-wait", "3s")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(out.Name())
		return len(b) > 0
	}, 30*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return len(agent.stderr.String()) > 0 }, 30*time.Second, 10*time.Millisecond)
	worker := startWorker(t, url)
	run := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--progress", "off"}, natsSim...)...)
	assert.Equal(t, 0, run.wait(t, 2*time.Minute), run.stderr.String())
	stopWorkers(t, worker)
	assert.Contains(t, worker.stderr.String(), "back after 3s", "the engine's --ack-wait, not the worker's")
	require.NoError(t, agent.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, agent.wait(t, 30*time.Second), agent.stderr.String())
}
