package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats-server/v2/server"
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

// TestReview12AnOldAuthorizationBlockIsRefused (review12, medium): the
// accounts (accounts.go) close review11's critical holes only where the
// server's configuration has them; a stock nats-server still configured
// by the authorization block an mdap before them wrote (one account:
// JetStream and every client together) is served by today's `maker nats
// provision` (ProvisionWhenReady, ServeAgent) without a word, and a
// coordinator credential there deletes MDAP_REPLIES by naming
// $JS.API.STREAM.DELETE.MDAP_REPLIES as the reply subject of a direct
// get of an empty line of a journal (review11's attack). docs/nats.md asks to write the block again when
// workers change, not on an upgrade, and nothing checks. The engine must
// refuse such a server (naming the accounts block to write), or the
// stream must stay.
func TestReview12AnOldAuthorizationBlockIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	opts := &server.Options{}
	require.NoError(t, opts.ProcessConfigString(oldAuthorizationBlock(keys)))
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", server.RANDOM_PORT, true, t.TempDir(), true, true
	ns, err := server.NewServer(opts)
	require.NoError(t, err)
	ns.Start()
	t.Cleanup(ns.Shutdown)
	require.True(t, ns.ReadyForConnections(10*time.Second))
	url := ns.ClientURL()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	anc, ajs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleAdmin))
	engine := cluster.DefaultProvision()
	err = cluster.ProvisionWhenReady(ctx, ajs, engine)
	if err == nil {
		var agent *cluster.Agent
		agent, err = cluster.ServeAgent(ctx, anc, engine)
		if err == nil {
			defer agent.Stop()
		}
	}
	if err != nil {
		t.Logf("refused: %v", err)
		require.Contains(t, err.Error(), "accounts", "a refusal names the accounts block to write")
		return
	}
	// An empty line of a journal, read by a direct get answered on the
	// stream's delete: an empty request there (review11).
	cnc, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	_, err = cjs.Publish(ctx, "mdap.journals.thief", nil)
	require.NoError(t, err)
	require.NoError(t, cnc.PublishRequest("$JS.API.DIRECT.GET."+cluster.JournalsStream+".mdap.journals.thief", "$JS.API.STREAM.DELETE."+cluster.RepliesStream, nil))
	require.NoError(t, cnc.Flush())
	time.Sleep(500 * time.Millisecond)
	_, err = ajs.Stream(ctx, cluster.RepliesStream)
	require.NoError(t, err, "the engine served a server whose clients share JetStream's account (an old authorization block), and a coordinator's reply subject deleted %s", cluster.RepliesStream)
}
