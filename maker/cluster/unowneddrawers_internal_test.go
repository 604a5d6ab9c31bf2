package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDrawersMadeBeforeTheQuotaCountForWhoAsksForThem: review4. An engine
// upgraded in place (durable sample streams) keeps the reply consumers
// its earlier agent made, which name no identity (no addedByKey). A run
// key asking again for 12 such Drawers (made as the earlier agent did,
// serveDrawer with no identity) and for 12 new ones is served at most its
// quota in all: the first identity to ask for a Drawer naming no one
// adopts it within its quota, as if it made it (only its coordinator
// knows its name). Before, asking again cost nothing and the quota came
// on top: 20 Drawers at one identity's request.
func TestDrawersMadeBeforeTheQuotaCountForWhoAsksForThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rogueSeed, err := AddRunCoordinator(dir, "rogue")
	require.NoError(t, err)
	keys, _, err := EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := func(seed string) (*nats.Conn, jetstream.JetStream) {
		opts, err := Credentials(seed, t.Name())
		require.NoError(t, err)
		nc, err := Connect(srv.ClientURL(), t.Name(), append(opts, nats.Timeout(30*time.Second))...)
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		require.NoError(t, err)
		return nc, js
	}
	// The rogue's Drawers of before the upgrade, as the earlier agent
	// made them.
	_, ajs := conn(SeedFile(dir, RoleAdmin))
	for i := range 12 {
		require.NoError(t, serveDrawer(ctx, ajs, fmt.Sprintf("dold%d", i), ProvisionConfig{}, &replySpace{}, nil, ""))
	}
	rogue, _ := conn(rogueSeed)
	key := replyIdentity(rogue.Opts.InboxPrefix, "")
	served := 0
	for _, id := range func() (ids []string) {
		for i := range 12 {
			ids = append(ids, fmt.Sprintf("dold%d", i))
		}
		for i := range 12 {
			ids = append(ids, fmt.Sprintf("dnew%d", i))
		}
		return ids
	}() {
		data, _ := json.Marshal(agentRequest{Name: id})
		m, err := rogue.RequestWithContext(ctx, agentSubject+"replies."+key, data)
		require.NoError(t, err)
		var resp agentResponse
		require.NoError(t, json.Unmarshal(m.Data, &resp))
		if resp.Error == "" {
			served++
		}
	}
	assert.LessOrEqual(t, served, DefaultDrawerQuota, "Drawers served at one identity's request")
}

// TestDrawersMadeBeforeTheQuotaShareOneQuota: reply consumers naming no
// identity, never asked for again (their holder keeps them alive by
// pulling, never through the agent), count together as one identity: an
// agent starting deletes those past one quota, the least recently active
// first, and the Drawers of identities are left alone.
func TestDrawersMadeBeforeTheQuotaShareOneQuota(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts, err := Credentials(SeedFile(dir, RoleAdmin), t.Name())
	require.NoError(t, err)
	nc, err := Connect(srv.ClientURL(), t.Name(), append(opts, nats.Timeout(30*time.Second))...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for i := range 12 {
		require.NoError(t, serveDrawer(ctx, js, fmt.Sprintf("dold%d", i), ProvisionConfig{}, &replySpace{}, nil, ""))
	}
	for i := range 3 {
		require.NoError(t, serveDrawer(ctx, js, fmt.Sprintf("down%d", i), ProvisionConfig{}, &replySpace{}, nil, "someone"))
	}
	// The holder of the first made reads a reply: the most recently
	// active (the others, never read, by their creation).
	_, err = js.Publish(ctx, repliesSubject+replyToken("dold0")+".job.w", []byte("{}"))
	require.NoError(t, err)
	cons, err := js.Consumer(ctx, RepliesStream, "dold0")
	require.NoError(t, err)
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	for range batch.Messages() {
	}
	require.NoError(t, batch.Error())

	a, err := ServeAgent(ctx, nc, ProvisionConfig{})
	require.NoError(t, err)
	a.Stop()
	var unowned, owned []string
	for ci := range func() <-chan *jetstream.ConsumerInfo {
		st, err := js.Stream(ctx, RepliesStream)
		require.NoError(t, err)
		return st.ListConsumers(ctx).Info()
	}() {
		if ci.Config.Metadata[addedByKey] == "" {
			unowned = append(unowned, ci.Name)
		} else {
			owned = append(owned, ci.Name)
		}
	}
	assert.Len(t, unowned, DefaultDrawerQuota, "reply consumers naming no one: %v", unowned)
	assert.Contains(t, unowned, "dold0", "the most recently active kept")
	assert.Len(t, owned, 3, "the Drawers of an identity left alone")
}
