package cluster_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheSharedLeaseBucketIsBounded: the shared lease bucket has a bound
// on its bytes (SharedLeaseBytes) and on one lease (MaxOwnerBytes), so its
// holders cannot take the store's disk: a lease over the bound is refused
// by the server, and a journal asked with an Owner over it is refused
// before the engine is asked (ErrConfig naming it).
func TestTheSharedLeaseBucketIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	st, err := ajs.Stream(ctx, "KV_"+cluster.LeaseBucket)
	require.NoError(t, err)
	assert.Equal(t, cluster.SharedLeaseBytes, st.CachedInfo().Config.MaxBytes)
	assert.Less(t, st.CachedInfo().Config.MaxMsgSize, int32(2*cluster.MaxOwnerBytes))
	_, err = cjs.Publish(ctx, "$KV."+cluster.LeaseBucket+".big", bytes.Repeat([]byte("x"), 2*cluster.MaxOwnerBytes))
	require.Error(t, err, "a lease over the bound")
	assert.Contains(t, err.Error(), "maximum")
	_, err = cluster.CreateJournal(ctx, cjs, "owner", cluster.JournalConfig{Owner: string(bytes.Repeat([]byte("o"), cluster.MaxOwnerBytes+1))})
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.Contains(t, err.Error(), "Owner")
	j, err := cluster.CreateJournal(ctx, cjs, "owner", cluster.JournalConfig{Owner: string(bytes.Repeat([]byte("o"), cluster.MaxOwnerBytes))})
	require.NoError(t, err, "an Owner of the bound")
	require.NoError(t, j.Close())
}
