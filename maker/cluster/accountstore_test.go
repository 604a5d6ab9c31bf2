package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// TestAStoreKeepsItsStreamsAcrossTheAccounts: a store written by an
// engine of one account (a token, or an mdap from before the accounts)
// keeps its streams when the engine starts with roles, whose JetStream
// lives in the engine's account, and back: a journal written before an
// upgrade resumes after it.
func TestAStoreKeepsItsStreamsAcrossTheAccounts(t *testing.T) {
	t.Parallel()
	store, dir := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hasKeep := func(js jetstream.JetStream) {
		t.Helper()
		_, err := js.Stream(ctx, "KEEP")
		require.NoError(t, err, "the stream written under the other account")
	}
	tokenServer := func() (*cluster.Server, jetstream.JetStream) {
		srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: store, Token: "s3cret"})
		require.NoError(t, err)
		nc, err := nats.Connect(srv.ClientURL(), nats.Token("s3cret"))
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		require.NoError(t, err)
		return srv, js
	}
	srv, js := tokenServer()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "KEEP", Subjects: []string{"keep.>"}})
	require.NoError(t, err)
	srv.Shutdown()

	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err = cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: store, Roles: keys})
	require.NoError(t, err)
	_, ajs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleAdmin))
	hasKeep(ajs)
	srv.Shutdown()

	srv, js = tokenServer()
	defer srv.Shutdown()
	hasKeep(js)
}
