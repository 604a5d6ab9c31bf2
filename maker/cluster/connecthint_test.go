package cluster_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A refused shared coordinator key (an engine upgraded to run keys, or
// started without --shared-coordinator) gets a hint naming both ways on;
// another refused credential, and an engine nobody answers, get theirs.
func TestConnectHint(t *testing.T) {
	t.Parallel()
	shared := "the coordinator credential " + filepath.Join("store", "creds", "coordinator.nk")
	hint := cluster.ConnectHint(nats.ErrAuthorization, shared)
	assert.Contains(t, hint, "--shared-coordinator")
	assert.Contains(t, hint, "maker nats run add RUN")
	other := cluster.ConnectHint(nats.ErrAuthorization, "the coordinator credential "+filepath.Join("store", "creds", "runs", "a.nk"))
	assert.NotContains(t, other, "--shared-coordinator")
	assert.Contains(t, other, "--nats-creds")
	assert.Equal(t, "start one with: maker nats", cluster.ConnectHint(nats.ErrNoServers, shared))
}

// A coordinator takes its run's key from a credentials folder, else the
// shared coordinator key; with neither it is told what was looked for.
func TestCoordinatorSeedIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := cluster.CoordinatorSeedIn(dir, "r1")
	require.ErrorIs(t, err, cluster.ErrNoRunKey)
	assert.Contains(t, err.Error(), filepath.Join("runs", "r1.nk"))

	seed, err := cluster.AddRunCoordinator(dir, "r1")
	require.NoError(t, err)
	got, err := cluster.CoordinatorSeedIn(dir, "r1")
	require.NoError(t, err)
	assert.Equal(t, seed, got)
	_, err = cluster.CoordinatorSeedIn(dir, "r2")
	require.ErrorIs(t, err, cluster.ErrNoRunKey, "another run's key is not this run's")
	_, err = cluster.CoordinatorSeedIn(dir, "")
	require.ErrorIs(t, err, cluster.ErrNoRunKey)

	_, _, err = cluster.EnsureCredentials(dir, cluster.RoleCoordinator)
	require.NoError(t, err)
	got, err = cluster.CoordinatorSeedIn(dir, "r2")
	require.NoError(t, err)
	assert.Equal(t, cluster.SeedFile(dir, cluster.RoleCoordinator), got, "the shared key, for a run without its own")
	got, err = cluster.CoordinatorSeedIn(dir, "r1")
	require.NoError(t, err)
	assert.Equal(t, seed, got, "a run's own key over the shared one")
}

// A client's credential: the path given, else $MDAP_NATS_CREDS, else
// ./mdap-nats/creds when it is a folder; in a folder, each role's seed.
func TestClientCreds(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(cluster.CredsEnv, "")
	path, from := cluster.ClientCreds{}.Resolve()
	assert.Empty(t, path+from, "no credential")
	require.NoError(t, os.MkdirAll(cluster.DefaultCredsDir, 0o700))
	path, from = cluster.ClientCreds{}.Resolve()
	assert.Equal(t, cluster.DefaultCredsDir, path)
	assert.Equal(t, cluster.DefaultCredsDir, from)
	t.Setenv(cluster.CredsEnv, "env.nk")
	path, from = cluster.ClientCreds{}.Resolve()
	assert.Equal(t, "env.nk", path)
	assert.Equal(t, "$"+cluster.CredsEnv, from)
	path, from = cluster.ClientCreds{Path: "given.nk"}.Resolve()
	assert.Equal(t, "given.nk", path)
	assert.Equal(t, "Path", from)

	creds := filepath.Join(dir, "creds")
	worker, err := cluster.AddWorker(creds, "gpu1")
	require.NoError(t, err)
	run, err := cluster.AddRunCoordinator(creds, "r1")
	require.NoError(t, err)
	c := cluster.ClientCreds{Run: "r1", Identity: "gpu1"}
	for role, want := range map[cluster.Role]string{cluster.RoleWorker: worker, cluster.RoleCoordinator: run, cluster.RoleAdmin: cluster.SeedFile(creds, cluster.RoleAdmin)} {
		got, err := c.SeedIn(creds, role)
		require.NoError(t, err, role)
		assert.Equal(t, want, got, role)
	}
	_, err = cluster.ClientCreds{Identity: "gpu2"}.SeedIn(creds, cluster.RoleWorker)
	assert.ErrorIs(t, err, cluster.ErrNoIdentity)
	_, err = cluster.ClientCreds{Run: "r2"}.SeedIn(creds, cluster.RoleCoordinator)
	assert.ErrorIs(t, err, cluster.ErrNoRunKey)
}
