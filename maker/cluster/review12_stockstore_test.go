package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
)

// TestReview12AStockServersStoreKeepsItsStreamsAcrossTheAccounts
// (review12, medium): docs/nats.md says a store written by an older mdap
// (one account) keeps its streams, the engine moving them to its account
// as it starts, and that a run key's run, after the upgrade, resumes from
// its journal, "where it was" (a stock server once its configuration
// from maker nats config or StockAuthConfig is reloaded). The move is the
// embedded server's only (adoptStore, in StartServer): a stock
// nats-server keeps each account's streams in a folder of its own
// (jetstream/<account>), so once its authorization block (every stream
// in $G) is replaced by StockAuthConfig's accounts block, the engine's
// account MDAP_ENGINE sees none of them: every journal, lease and task
// of the stock engine is gone from view (its runs start over), and
// nothing says so. Here an in-process server stands for the stock one,
// its configuration replaced on the same store. A fix that moves the
// store (jetstream/$G to jetstream/MDAP_ENGINE) as a step of the upgrade
// rather than in StockAuthConfig's block belongs between the two starts.
func TestReview12AStockServersStoreKeepsItsStreamsAcrossTheAccounts(t *testing.T) {
	t.Parallel()
	dir, store := t.TempDir(), t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	start := func(config string) *server.Server {
		opts := &server.Options{}
		require.NoError(t, opts.ProcessConfigString(config))
		opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", server.RANDOM_PORT, true, store, true, true
		ns, err := server.NewServer(opts)
		require.NoError(t, err)
		ns.Start()
		require.True(t, ns.ReadyForConnections(10*time.Second))
		return ns
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	old := start(oldAuthorizationBlock(keys))
	anc, ajs := connectAs(t, old.ClientURL(), cluster.SeedFile(dir, cluster.RoleAdmin))
	require.NoError(t, cluster.ProvisionWhenReady(ctx, ajs, cluster.DefaultProvision()))
	_, err = ajs.Publish(ctx, "mdap.journals.r1", []byte("a line of run r1"))
	require.NoError(t, err)
	anc.Close()
	old.Shutdown()
	old.WaitForShutdown()

	upgraded := start(cluster.StockAuthConfig(keys))
	t.Cleanup(upgraded.Shutdown)
	_, ajs = connectAs(t, upgraded.ClientURL(), cluster.SeedFile(dir, cluster.RoleAdmin))
	st, err := ajs.Stream(ctx, cluster.JournalsStream)
	require.NoError(t, err, "the stock engine's journals after its configuration took the accounts block")
	info, err := st.Info(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, info.State.Msgs, "run r1's line kept")
}
