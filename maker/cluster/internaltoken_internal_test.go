package cluster

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// The engine's own token (the admin's rights in the engine's account)
// signs in only the engine's in-process connection: shown over TCP, by
// anyone who learned it, it is refused like a wrong one.
func TestTheEnginesOwnTokenSignsInOnlyInProcess(t *testing.T) {
	t.Parallel()
	keys, _, err := EnsureCredentials(t.TempDir())
	require.NoError(t, err)
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	token := srv.auth.internal
	require.NotEmpty(t, token)

	_, err = nats.Connect(srv.ClientURL(), nats.Token(token), nats.MaxReconnects(0))
	require.ErrorIs(t, err, nats.ErrAuthorization, "the token over TCP")

	nc, err := nats.Connect("", nats.InProcessServer(srv.ns), nats.Token(token))
	require.NoError(t, err, "the token in process")
	nc.Close()
}
