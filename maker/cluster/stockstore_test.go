package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAStockStoreKeepsItsStreamsAcrossTheAccounts: a stock nats-server
// keeps each account's streams in a folder of its own
// (jetstream/<account>), so once its authorization block (every stream
// in $G) is replaced by StockAuthConfig's accounts block, the engine's
// account MDAP_ENGINE saw none of them: every journal, lease and task of
// the stock engine was gone from view, its runs started over, and
// nothing said so (review12). docs/nats.md's upgrade takes
// AdoptStockStore between stopping the server and starting it with the
// accounts block: run r1's journal line is there after it. Here an
// in-process server stands for the stock one, its configuration replaced
// on the same store.
func TestAStockStoreKeepsItsStreamsAcrossTheAccounts(t *testing.T) {
	t.Parallel()
	dir, store := t.TempDir(), t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Provision refuses the old block now (ErrOldAuthBlock): the stream
	// stands for the one an mdap before the accounts provisioned there.
	old := startStock(t, oldAuthorizationBlock(keys), store)
	anc, ajs := connectAs(t, old.ClientURL(), cluster.SeedFile(dir, cluster.RoleAdmin))
	_, err = ajs.CreateStream(ctx, jetstream.StreamConfig{Name: cluster.JournalsStream, Subjects: []string{"mdap.journals.>"}, Storage: jetstream.FileStorage})
	require.NoError(t, err)
	_, err = ajs.Publish(ctx, "mdap.journals.r1", []byte("a line of run r1"))
	require.NoError(t, err)
	anc.Close()
	old.Shutdown()
	old.WaitForShutdown()

	moved, err := cluster.AdoptStockStore(store)
	require.NoError(t, err)
	assert.True(t, moved)
	again, err := cluster.AdoptStockStore(store)
	require.NoError(t, err, "a second run is a no-op")
	assert.False(t, again)

	upgraded := startStock(t, cluster.StockAuthConfig(keys), store)
	_, ajs = connectAs(t, upgraded.ClientURL(), cluster.SeedFile(dir, cluster.RoleAdmin))
	require.NoError(t, cluster.ProvisionWhenReady(ctx, ajs, cluster.DefaultProvision()))
	st, err := ajs.Stream(ctx, cluster.JournalsStream)
	require.NoError(t, err, "the stock engine's journals after its configuration took the accounts block")
	info, err := st.Info(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, info.State.Msgs, "run r1's line kept")
}

// AdoptStockStore moves nothing over streams the engine's account holds
// already (the server ran with the accounts block before the move): it
// says so, and both folders stay.
func TestAdoptStockStoreRefusesToMergeTwoStores(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	for _, acc := range []string{"$G", cluster.EngineAccount} {
		require.NoError(t, os.MkdirAll(filepath.Join(store, "jetstream", acc, "streams", "MDAP_JOURNALS"), 0o700))
	}
	moved, err := cluster.AdoptStockStore(store)
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.False(t, moved)
	assert.Contains(t, err.Error(), "both hold streams")
	for _, acc := range []string{"$G", cluster.EngineAccount} {
		assert.DirExists(t, filepath.Join(store, "jetstream", acc, "streams", "MDAP_JOURNALS"))
	}
	moved, err = cluster.AdoptStockStore(t.TempDir())
	require.NoError(t, err, "a new store")
	assert.False(t, moved)
}
