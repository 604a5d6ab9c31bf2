package cluster

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// serveInternal starts an embedded server on a free loopback port with a
// temporary store and connects to it; both end with the test.
func serveInternal(t *testing.T) (*Server, *nats.Conn, jetstream.JetStream) {
	t.Helper()
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	nc, err := Connect(srv.ClientURL(), t.Name())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return srv, nc, js
}
