package cluster

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentStopRefusesALateWorkRequest: a worker's request the
// subscription hands over after Stop (Unsubscribe does not wait for a
// callback under way) starts no goroutine, whose wg.Go would race Stop's
// Wait, and is answered at once that the engine is stopping.
func TestAgentStopRefusesALateWorkRequest(t *testing.T) {
	t.Parallel()
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	a, err := ServeAgent(context.Background(), nc, ProvisionConfig{})
	require.NoError(t, err)
	a.Stop()

	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	require.NoError(t, err)
	data, err := json.Marshal(pullRequest{Route: "r", N: 1, Wait: time.Second})
	require.NoError(t, err)
	a.handle(&nats.Msg{Subject: workSubject + "w1.pull", Reply: inbox, Data: data})
	assert.Zero(t, len(a.slots), "no goroutine serves it")
	m, err := sub.NextMsg(5 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, "the engine is stopping", m.Header.Get(endHeader))
	a.Stop() // again: no goroutine to wait for
}
