package cluster_test

import (
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConnectionsBoundedPerKey: one key holds at most MaxConnsPerKey
// connections at once; one more is refused while another key still gets
// in, and once one of them closes the key may connect again.
func TestConnectionsBoundedPerKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, MaxConnsPerKey: 2})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	dial := func(role cluster.Role) (*nats.Conn, error) {
		opts, err := cluster.Credentials(cluster.SeedFile(dir, role), t.Name())
		require.NoError(t, err)
		nc, err := nats.Connect(url, opts...)
		if err == nil {
			t.Cleanup(nc.Close)
		}
		return nc, err
	}
	first, err := dial(cluster.RoleWorker)
	require.NoError(t, err)
	_, err = dial(cluster.RoleWorker)
	require.NoError(t, err)
	_, err = dial(cluster.RoleWorker)
	require.Error(t, err, "a third connection of the worker key")
	_, err = dial(cluster.RoleCoordinator)
	require.NoError(t, err, "another key is not bounded by the worker's")
	first.Close()
	assert.Eventually(t, func() bool {
		_, err := dial(cluster.RoleWorker)
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "a connection closed makes room")
}
