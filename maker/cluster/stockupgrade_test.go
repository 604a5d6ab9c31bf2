package cluster_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStockNATSServerOldAuthBlock: a stock nats-server still configured
// with the authorization block written before workers named their key in
// their route's request (mdap.engine.route.<key>, refused by that block).
// A new worker fails at once with ErrAuth naming the subject and the fix
// (write the block again: maker nats config, StockAuthConfig), not after
// the agent's 10 s with a bare "context deadline exceeded".
func TestStockNATSServerOldAuthBlock(t *testing.T) {
	t.Parallel()
	bin := stockServer(t)
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	block := cluster.StockAuthConfig(keys)
	old := regexp.MustCompile(`"mdap\.engine\.route\.U[A-Z0-9]+", `).ReplaceAllString(block, "")
	require.NotEqual(t, block, old, "the worker's scoped route subject, taken out")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	conf := filepath.Join(dir, "nats.conf")
	body := fmt.Sprintf("listen: \"127.0.0.1:%d\"\njetstream { store_dir: %q }\n%s", port, filepath.Join(dir, "js"), old)
	require.NoError(t, os.WriteFile(conf, []byte(body), 0o600))
	cmd := exec.Command(bin, "-c", conf)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 20*time.Second, 20*time.Millisecond)
	_, ajs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleAdmin))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
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
