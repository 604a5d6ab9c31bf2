package cluster_test

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStockNATSServerOldAuthBlock: a stock nats-server v2.15.2 still
// configured with the authorization block an mdap wrote before workers
// named their key in their route's request (mdap.engine.route.<key>) and
// before the accounts: one account, JetStream with every client. maker
// nats provision (Provision, ServeAgent) refuses it at once with
// ErrOldAuthBlock naming the fix (the server answers $SYS.REQ.USER.INFO
// with the admin's account, $G). A block of the accounts trimmed of that
// subject by hand still makes a new worker fail at once with ErrAuth
// naming the subject and the fix (write the block again: maker nats
// config, StockAuthConfig), not after the agent's 10 s with a bare
// "context deadline exceeded".
func TestStockNATSServerOldAuthBlock(t *testing.T) {
	t.Parallel()
	bin := stockServer(t)
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	unscoped := regexp.MustCompile(`"mdap\.engine\.route\.U[A-Z0-9]+", `)
	serve := func(name, block string) string {
		return startStockProcess(t, bin, filepath.Join(dir, name+".conf"), filepath.Join(dir, name), block).url
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	old := unscoped.ReplaceAllString(oldAuthorizationBlock(keys), "")
	require.NotEqual(t, oldAuthorizationBlock(keys), old, "the worker's scoped route subject, taken out")
	anc, ajs := connectAs(t, serve("old", old), cluster.SeedFile(dir, cluster.RoleAdmin))
	err = cluster.ProvisionWhenReady(ctx, ajs, cluster.ProvisionConfig{})
	require.ErrorIs(t, err, cluster.ErrOldAuthBlock, "one account: refused")
	assert.Contains(t, err.Error(), "maker nats config")
	_, err = cluster.ServeAgent(ctx, anc, cluster.ProvisionConfig{})
	require.ErrorIs(t, err, cluster.ErrOldAuthBlock)

	block := cluster.StockAuthConfig(keys)
	trimmed := unscoped.ReplaceAllString(block, "")
	require.NotEqual(t, block, trimmed, "the worker's scoped route subject, taken out")
	url := serve("trimmed", trimmed)
	_, ajs = connectAs(t, url, cluster.SeedFile(dir, cluster.RoleAdmin))
	require.NoError(t, cluster.Provision(ctx, ajs, cluster.ProvisionConfig{}))
	agent, err := cluster.ServeAgent(ctx, ajs.Conn(), cluster.ProvisionConfig{})
	require.NoError(t, err)
	t.Cleanup(agent.Stop)

	_, wjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleWorker))
	began := time.Now()
	_, err = cluster.NewWorker(ctx, wjs, simModel(t, 1), cluster.WorkerConfig{})
	took := time.Since(began)
	require.ErrorIs(t, err, cluster.ErrAuth)
	assert.Contains(t, err.Error(), "mdap.engine.route.")
	assert.Contains(t, err.Error(), "maker nats config")
	assert.Less(t, took, 3*time.Second, "failed fast")
}
