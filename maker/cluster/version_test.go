package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMixedVersionsAreNamed: the engine names its protocol in its job
// stream's metadata; a coordinator (Drawer) or worker of another protocol
// fails at its setup, within seconds, with ErrVersion naming both
// versions and what to upgrade: the engine when it is older (a job stream
// that names none: an mdap before the field), the client when it is
// newer. Before, a client of another version published jobs no consumer
// took, or asked what no permission allowed, and waited out its timeout.
func TestMixedVersionsAreNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	workerSeed, err := cluster.AddWorker(dir, "w")
	require.NoError(t, err)
	runSeed, err := cluster.AddRunCoordinator(dir, "run")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir, cluster.RoleAdmin)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	versionScenario(t, srv.ClientURL(), workerSeed, runSeed, cluster.SeedFile(dir, cluster.RoleAdmin))
}

// versionScenario: see TestMixedVersionsAreNamed; url is a provisioned
// engine, the seeds a worker's, a coordinator's and the admin's.
func versionScenario(t *testing.T, url, workerSeed, runSeed, adminSeed string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, ajs := connectAs(t, url, adminSeed)
	st, err := ajs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	engine := st.CachedInfo().Config
	assert.Equal(t, "3", engine.Metadata["mdap.protocol"], "the engine names its protocol")
	assert.Equal(t, "2", engine.Metadata["mdap.wire"])
	_, wjs := connectAs(t, url, workerSeed)
	_, cjs := connectAs(t, url, runSeed)

	setProtocol := func(meta map[string]string) {
		c := engine
		c.Metadata = meta
		_, err := ajs.UpdateStream(ctx, c)
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		name       string
		meta       map[string]string
		engineSays string
		upgrade    string
	}{
		{"an older engine", map[string]string{"note": "before the protocol was named"}, "protocol 0 (wire unnamed)", "upgrade the engine"},
		{"a newer engine", map[string]string{"mdap.protocol": "99", "mdap.wire": "7"}, "protocol 99 (wire 7)", "upgrade this"},
	} {
		setProtocol(tc.meta)
		began := time.Now()
		_, err := cluster.NewDrawer(ctx, cjs, cluster.DrawerConfig{})
		require.ErrorIs(t, err, cluster.ErrVersion, tc.name)
		assert.Contains(t, err.Error(), tc.engineSays, tc.name)
		assert.Contains(t, err.Error(), "this coordinator protocol 3 (wire 2)", tc.name)
		assert.Contains(t, err.Error(), tc.upgrade, tc.name)
		_, err = cluster.NewWorker(ctx, wjs, simModel(t, 1), cluster.WorkerConfig{})
		require.ErrorIs(t, err, cluster.ErrVersion, tc.name)
		assert.Contains(t, err.Error(), tc.engineSays, tc.name)
		assert.Contains(t, err.Error(), "this worker protocol 3 (wire 2)", tc.name)
		assert.Contains(t, err.Error(), tc.upgrade, tc.name)
		assert.Less(t, time.Since(began), 5*time.Second, "%s: refused at once", tc.name)
	}

	// The same protocol again: both set up.
	setProtocol(engine.Metadata)
	d, err := cluster.NewDrawer(ctx, cjs, cluster.DrawerConfig{})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	_, err = cluster.NewWorker(ctx, wjs, simModel(t, 1), cluster.WorkerConfig{})
	require.NoError(t, err)
}
