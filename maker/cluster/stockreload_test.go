package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestStockNATSServerTakesIssuedWorkersAtReload: on a stock nats-server,
// as docs/nats.md says, a worker issued after the server started signs
// in once the accounts block is written again (StockAuthConfig of
// EnsureCredentials) and the server reloaded, and serves a run key's
// sample through the engine's agent; revoked and reloaded again, its
// connection is closed and it cannot sign in.
func TestStockNATSServerTakesIssuedWorkersAtReload(t *testing.T) {
	t.Parallel()
	bin := stockServer(t)
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds")
	_, _, err := cluster.EnsureCredentials(creds, cluster.RoleAdmin)
	require.NoError(t, err)
	runSeed, err := cluster.AddRunCoordinator(creds, "r1")
	require.NoError(t, err)
	auth := func() string {
		keys, _, err := cluster.EnsureCredentials(creds, cluster.RoleAdmin)
		require.NoError(t, err)
		return cluster.StockAuthConfig(keys)
	}
	srv := startStockProcess(t, bin, filepath.Join(dir, "nats.conf"), filepath.Join(dir, "js"), auth())
	url := srv.url
	anc, ajs := connectAs(t, url, cluster.SeedFile(creds, cluster.RoleAdmin))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, cluster.Provision(ctx, ajs, cluster.ProvisionConfig{}))
	agent, err := cluster.ServeAgent(ctx, anc, cluster.ProvisionConfig{})
	require.NoError(t, err)
	t.Cleanup(agent.Stop)

	signIn := func(seed string) (*nats.Conn, error) {
		opts, err := cluster.Credentials(seed, t.Name())
		require.NoError(t, err)
		return cluster.Connect(url, t.Name(), append(opts, nats.MaxReconnects(0), nats.Timeout(5*time.Second))...)
	}
	reload := func() {
		srv.write(t, auth())
		require.NoError(t, srv.cmd.Process.Signal(syscall.SIGHUP))
	}

	seed, err := cluster.AddWorker(creds, "w1")
	require.NoError(t, err)
	_, err = signIn(seed)
	require.Error(t, err, "issued, not yet reloaded: the server does not know the key")
	reload()
	var wnc *nats.Conn
	require.Eventually(t, func() bool {
		wnc, err = signIn(seed)
		return err == nil
	}, 20*time.Second, 100*time.Millisecond, "issued and reloaded: %v", err)
	t.Cleanup(wnc.Close)

	_, wjs := connectAs(t, url, seed)
	worker := newWorker(t, wjs, slowEcho{}, cluster.WorkerConfig{Inflight: 2})
	stop := runWorker(t, worker)
	defer stop()
	_, rjs := connectAs(t, url, runSeed)
	d := newDrawer(t, rjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	resp, err := remote.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "the reloaded worker answers")})
	require.NoError(t, err, "a run key's sample served by the worker issued at reload")
	assert.Equal(t, "the reloaded worker answers", resp.Choices[0].Content)

	kept := filepath.Join(dir, "w1-copy.nk") // the seed as its machine keeps it
	data, err := os.ReadFile(seed)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(kept, data, 0o600))
	require.NoError(t, cluster.RevokeWorker(creds, "w1"))
	reload()
	require.Eventually(t, wnc.IsClosed, 20*time.Second, 100*time.Millisecond, "revoked and reloaded: its connection is closed")
	_, err = signIn(kept)
	assert.Error(t, err, "revoked and reloaded: it cannot sign in")
}
