package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oldAuthorizationBlock is what StockAuthConfig wrote before the accounts
// (3e4f27a^1): every role's users in one account, with JetStream.
func oldAuthorizationBlock(keys cluster.RoleKeys) string {
	var b strings.Builder
	b.WriteString("authorization {\n  users = [\n")
	for _, r := range cluster.Roles {
		for _, pub := range keys[r] {
			p := cluster.Permissions(r, "_INBOX_"+pub)
			q := func(xs []string) string { return `["` + strings.Join(xs, `", "`) + `"]` }
			fmt.Fprintf(&b, "    { nkey: %q, permissions: { publish: { allow: %s }, subscribe: { allow: %s } } },\n", pub, q(p.Publish.Allow), q(p.Subscribe.Allow))
		}
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

// startStock starts an in-process server standing for a stock
// nats-server of the configuration config (an authorization or accounts
// block) on store.
func startStock(t *testing.T, config, store string) *server.Server {
	t.Helper()
	opts := &server.Options{}
	require.NoError(t, opts.ProcessConfigString(config))
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", server.RANDOM_PORT, true, store, true, true
	ns, err := server.NewServer(opts)
	require.NoError(t, err)
	ns.Start()
	t.Cleanup(ns.Shutdown)
	require.True(t, ns.ReadyForConnections(10*time.Second))
	return ns
}

// TestAnOldAuthorizationBlockIsRefusedByProvisionAndTheAgent: the
// accounts (accounts.go) close review11's holes only where the server's
// configuration has them. On a stock nats-server still configured by the
// authorization block an mdap before them wrote (one account: JetStream
// and every client together), a coordinator deleted MDAP_REPLIES by
// naming $JS.API.STREAM.DELETE.MDAP_REPLIES as the reply subject of a
// direct get of an empty journal line (review12), and maker nats
// provision (ProvisionWhenReady, ServeAgent) served it without a word.
// Both refuse it now, before touching JetStream, with ErrOldAuthBlock
// naming the upgrade; the same keys under StockAuthConfig's accounts
// block are served.
func TestAnOldAuthorizationBlockIsRefusedByProvisionAndTheAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	engine := cluster.DefaultProvision()

	old := startStock(t, oldAuthorizationBlock(keys), t.TempDir())
	anc, ajs := connectAs(t, old.ClientURL(), cluster.SeedFile(dir, cluster.RoleAdmin))
	began := time.Now()
	err = cluster.ProvisionWhenReady(ctx, ajs, engine)
	require.ErrorIs(t, err, cluster.ErrOldAuthBlock, "provision refuses a server whose clients share JetStream's account")
	require.ErrorIs(t, err, cluster.ErrAuth)
	assert.Less(t, time.Since(began), 5*time.Second, "refused at once, not tried again")
	for _, fix := range []string{`"$G"`, cluster.EngineAccount, "maker nats config", "StockAuthConfig", "AdoptStockStore"} {
		assert.Contains(t, err.Error(), fix)
	}
	_, err = ajs.Stream(ctx, cluster.RepliesStream)
	require.ErrorIs(t, err, jetstream.ErrStreamNotFound, "nothing provisioned")
	_, err = cluster.ServeAgent(ctx, anc, engine)
	require.ErrorIs(t, err, cluster.ErrOldAuthBlock, "the agent refuses it too")

	upgraded := startStock(t, cluster.StockAuthConfig(keys), t.TempDir())
	anc, ajs = connectAs(t, upgraded.ClientURL(), cluster.SeedFile(dir, cluster.RoleAdmin))
	require.NoError(t, cluster.ProvisionWhenReady(ctx, ajs, engine))
	agent, err := cluster.ServeAgent(ctx, anc, engine)
	require.NoError(t, err)
	agent.Stop()
}
