package cluster_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEngineCredsRoles: the shared keys are made and accepted only when
// asked; a shared key's public file left in the folder is named as not
// accepted.
func TestEngineCredsRoles(t *testing.T) {
	t.Parallel()
	c := cluster.EngineCreds{Dir: t.TempDir()}
	assert.Equal(t, []cluster.Role{cluster.RoleAdmin}, c.Roles())
	keys, made, err := c.Ensure()
	require.NoError(t, err)
	assert.Equal(t, []cluster.Role{cluster.RoleAdmin}, made)
	assert.NotEmpty(t, keys[cluster.RoleAdmin])
	assert.Empty(t, keys[cluster.RoleCoordinator], "no shared coordinator key unless asked")
	assert.Empty(t, c.Unaccepted())

	shared := cluster.EngineCreds{Dir: c.Dir, SharedCoordinator: true, SharedWorker: true}
	keys, made, err = shared.Ensure()
	require.NoError(t, err)
	assert.ElementsMatch(t, []cluster.Role{cluster.RoleCoordinator, cluster.RoleWorker}, made)
	assert.NotEmpty(t, keys[cluster.RoleCoordinator])
	assert.NotEmpty(t, keys[cluster.RoleWorker])
	assert.Empty(t, shared.Unaccepted())
	assert.Equal(t, []cluster.Role{cluster.RoleCoordinator, cluster.RoleWorker}, c.Unaccepted())
	keys, _, err = c.Ensure()
	require.NoError(t, err)
	assert.Empty(t, keys[cluster.RoleWorker], "a worker.pub left in the folder is not accepted unless asked")
}

// TestEngineCredsWatchCutsOffARevokedWorker: the watch gives the server
// the folder's keys, so that revoking a worker closes its connection and
// is reported; a folder it cannot read is reported and the keys kept.
func TestEngineCredsWatchCutsOffARevokedWorker(t *testing.T) {
	t.Parallel()
	c := cluster.EngineCreds{Dir: t.TempDir()}
	seed, err := cluster.AddWorker(c.Dir, "gpu1")
	require.NoError(t, err)
	keys, _, err := c.Ensure()
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	nc, _ := connectAs(t, srv.ClientURL(), seed)

	ctx, cancel := context.WithCancel(context.Background())
	type event struct {
		closed int
		err    error
	}
	events := make(chan event, 100)
	wait := c.Watch(ctx, srv, 10*time.Millisecond, func(closed int, err error) {
		select {
		case events <- event{closed, err}:
		default:
		}
	})
	defer func() { cancel(); wait() }()
	require.NoError(t, cluster.RevokeWorker(c.Dir, "gpu1"))
	select {
	case e := <-events:
		require.NoError(t, e.err)
		assert.Equal(t, 1, e.closed, "the revoked worker's connection")
	case <-time.After(10 * time.Second):
		t.Fatal("the revocation was not reported")
	}
	assert.Eventually(t, func() bool { return !nc.IsConnected() }, 10*time.Second, 10*time.Millisecond)

	require.NoError(t, os.WriteFile(cluster.PubFile(c.Dir, cluster.RoleAdmin), []byte("not a key\n"), 0o600))
	select {
	case e := <-events:
		assert.ErrorIs(t, e.err, cluster.ErrAuth, "a folder it cannot read")
	case <-time.After(10 * time.Second):
		t.Fatal("the unreadable folder was not reported")
	}
}
