package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A coordinator whose engine does not answer for a while when it starts
// (the server's answers lost, as while a cluster elects leaders after a
// node's restart, until the client leaves the stalled connection) still
// opens its task queue and its drawer: the setup is asked again, not
// failed on the first request that timed out. CI's cluster script saw a
// coordinator started just after a node's restart exit 1 with "stream
// MDAP_TASKS: context deadline exceeded" and had to start it again.
func TestSetupOutlastsAnEngineThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		open func(context.Context, jetstream.JetStream) error
	}{
		{"task queue", func(ctx context.Context, js jetstream.JetStream) error {
			_, err := OpenTaskQueue(ctx, js, "q", TaskQueueConfig{})
			return err
		}},
		{"drawer", func(ctx context.Context, js jetstream.JetStream) error {
			d, err := NewDrawer(ctx, js, DrawerConfig{})
			if err == nil {
				d.Close()
			}
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
			require.NoError(t, err)
			t.Cleanup(srv.Shutdown)
			proxy := startStallProxy(t, srv.ClientURL()[len("nats://"):])
			nc, err := Connect(proxy.url(), t.Name())
			require.NoError(t, err)
			t.Cleanup(nc.Close)
			js, err := jetstream.New(nc)
			require.NoError(t, err)

			proxy.stall(true) // until the client takes the connection for stalled and makes another
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			began := time.Now()
			require.NoError(t, c.open(ctx, js))
			assert.Greater(t, time.Since(began), pingInterval, "opened once the stall was over")
		})
	}
}
