package cluster_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartEngineMakesItsKeysOnceAndWatchesTheFolder(t *testing.T) {
	noCredsAround(t)
	store := t.TempDir()
	cfg := cluster.EngineConfig{Addr: "127.0.0.1:0", Store: store}
	var mu sync.Mutex
	revoked := 0
	e, err := cluster.StartEngine(cfg, nil, func(closed int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			revoked += closed
		}
	})
	require.NoError(t, err)
	defer e.Stop()
	assert.Equal(t, filepath.Join(store, "creds"), e.Creds.Dir)
	assert.Equal(t, store, e.StoreDir)
	assert.NotEmpty(t, e.Made, "the admin's key made at the first start")

	// An identity issued now is let in, and cut off once revoked.
	seed, err := cluster.AddWorker(e.Creds.Dir, "gpu1")
	require.NoError(t, err)
	worker := cluster.ClientCreds{Path: seed}
	var nc interface{ IsConnected() bool }
	require.Eventually(t, func() bool {
		c, _, err := cluster.Dial(e.ClientURL(), worker, cluster.RoleWorker, t.Name())
		if err == nil {
			t.Cleanup(c.Close)
			nc = c
		}
		return err == nil
	}, 10*time.Second, 100*time.Millisecond, "the watch lets the new identity in")
	require.NoError(t, cluster.RevokeWorker(e.Creds.Dir, "gpu1"))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return revoked > 0 && !nc.IsConnected()
	}, 10*time.Second, 50*time.Millisecond, "the watch closes the revoked identity's connection and reports it")

	url := e.ClientURL()
	e.Stop()
	e.Stop() // twice is safe
	_, _, err = cluster.Dial(url, cluster.ClientCreds{Path: e.Creds.Dir}, cluster.RoleAdmin, t.Name())
	assert.ErrorIs(t, err, cluster.ErrEngine, "stopped")

	again, err := cluster.StartEngine(cfg, nil, nil)
	require.NoError(t, err)
	defer again.Stop()
	assert.Empty(t, again.Made, "the keys are kept at the next start")
}

func TestStartEngineRefusesABadConfigurationByItsField(t *testing.T) {
	t.Parallel()
	_, err := cluster.StartEngine(cluster.EngineConfig{Addr: "nonsense", Store: t.TempDir()}, nil, nil)
	require.ErrorIs(t, err, cluster.ErrConfig)
	fe := fielderr.As(err)
	require.NotNil(t, fe)
	assert.Equal(t, "Addr", fe.Fields[0].Name)

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = cluster.StartEngine(cluster.EngineConfig{Addr: "127.0.0.1:0", Store: t.TempDir(), Creds: filepath.Join(file, "creds")}, nil, nil)
	require.Error(t, err, "a credentials folder that cannot be made")
	assert.ErrorIs(t, err, cluster.ErrAuth)

	e, err := cluster.StartEngine(cluster.EngineConfig{Addr: "127.0.0.1:0", Store: t.TempDir(), Auth: cluster.AuthToken, Token: "s3cret"}, nil, nil)
	require.NoError(t, err)
	defer e.Stop()
	assert.Empty(t, e.Creds.Dir, "a token: no folder, no watch")
}
