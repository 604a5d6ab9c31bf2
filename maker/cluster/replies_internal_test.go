package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplySubjectGoesAfterTwoLooksOnly: a Drawer subject whose consumer
// is absent stays while the looks that found it absent are less than
// absentGap apart (a consumer list read while another agent adds that
// Drawer costs it nothing), goes once two looks absentGap apart found no
// consumer, its replies purged; a live Drawer's subject missing is put
// back on the first look; a Drawer closed through the agent (drop) goes
// at once.
func TestReplySubjectGoesAfterTwoLooksOnly(t *testing.T) {
	t.Parallel()
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gone, live := newDrawerID(), newDrawerID()
	cfg := repliesStreamConfig(1)
	cfg.Subjects = []string{noDrawer, drawerReplies(replyToken(gone))}
	_, err = js.CreateOrUpdateStream(ctx, cfg)
	require.NoError(t, err)
	_, err = js.Publish(ctx, repliesSubject+replyToken(gone)+".j.w", []byte("a reply"))
	require.NoError(t, err)
	_, err = js.CreateConsumer(ctx, RepliesStream, replyConsumerConfig(live))
	require.NoError(t, err)
	subjects := func() []string {
		st, err := js.Stream(ctx, RepliesStream)
		require.NoError(t, err)
		return st.CachedInfo().Config.Subjects
	}

	var space replySpace
	n, err := space.reconcile(ctx, js, "")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.ElementsMatch(t, []string{noDrawer, drawerReplies(replyToken(gone)), drawerReplies(replyToken(live))}, subjects(),
		"the live Drawer's subject added at the first look, the absent one's kept")
	_, err = space.reconcile(ctx, js, "")
	require.NoError(t, err)
	assert.Contains(t, subjects(), drawerReplies(replyToken(gone)), "kept at a second look within absentGap")

	space.mu.Lock()
	space.absent[replyToken(gone)] = time.Now().Add(-absentGap) // the first look, absentGap ago
	space.mu.Unlock()
	_, err = space.reconcile(ctx, js, "")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{noDrawer, drawerReplies(replyToken(live))}, subjects(), "gone after two looks absentGap apart")
	st, err := js.Stream(ctx, RepliesStream)
	require.NoError(t, err)
	assert.Zero(t, st.CachedInfo().State.Msgs, "its replies purged")

	require.NoError(t, dropDrawer(ctx, js, live, &replySpace{}))
	assert.Equal(t, []string{noDrawer}, subjects(), "a Drawer closed through the agent goes at once")
}
