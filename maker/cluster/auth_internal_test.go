package cluster

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClient is a client signing in, as the server's authentication sees
// it.
type fakeClient struct {
	opts   server.ClientOpts
	nonce  []byte
	user   *server.User
	remote net.Addr // nil: none known
}

func (c *fakeClient) GetOpts() *server.ClientOpts                 { return &c.opts }
func (c *fakeClient) GetTLSConnectionState() *tls.ConnectionState { return nil }
func (c *fakeClient) RegisterUser(u *server.User)                 { c.user = u }
func (c *fakeClient) RemoteAddress() net.Addr                     { return c.remote }
func (c *fakeClient) GetNonce() []byte                            { return c.nonce }
func (c *fakeClient) Kind() int                                   { return server.CLIENT }
func (c *fakeClient) GetID() uint64                               { return 1 }

// TestEngineLetsNoClientInBeforeProvisioning: until the engine has
// provisioned its resources, a client with a valid role key is refused
// and only the engine's own connection (its internal token) gets in;
// once open, the client gets in with its role.
func TestEngineLetsNoClientInBeforeProvisioning(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "creds")
	keys, _, err := EnsureCredentials(dir)
	require.NoError(t, err)
	a := newRoleAuth(keys, "internal-secret")
	kp, err := nkeys.FromSeed(mustRead(t, SeedFile(dir, RoleWorker)))
	require.NoError(t, err)
	pub, _ := kp.PublicKey()
	nonce := []byte("nonce-of-the-server")
	sig, err := kp.Sign(nonce)
	require.NoError(t, err)
	worker := func() *fakeClient {
		return &fakeClient{nonce: nonce, opts: server.ClientOpts{Nkey: pub, Sig: base64.RawURLEncoding.EncodeToString(sig), Name: "w _INBOX_" + pub + ".abc"}}
	}
	assert.False(t, a.Check(worker()), "a worker before provisioning")
	assert.False(t, a.Check(&fakeClient{opts: server.ClientOpts{Token: "guess"}}), "a wrong internal token")
	pipe, other := net.Pipe() // the server's in-process connection
	pipe.Close()
	other.Close()
	engine := &fakeClient{opts: server.ClientOpts{Token: "internal-secret"}, remote: pipe.RemoteAddr()}
	require.True(t, a.Check(engine), "the engine's own connection")
	assert.Equal(t, []string{">"}, engine.user.Permissions.Publish.Allow)
	a.open.Store(true)
	w := worker()
	require.True(t, a.Check(w), "a worker once provisioned")
	assert.Equal(t, Permissions(RoleWorker, "_INBOX_"+pub+".abc"), w.user.Permissions)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.TrimSpace(b)
}

// TestWriteSecretUsesAFreshTempFile: writeSecret never writes through a
// file already at a fixed temporary name (here a link to a file outside,
// planted by whoever could write the folder): the secret lands only in
// path, mode 0600, and the planted target is untouched.
func TestWriteSecretUsesAFreshTempFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "loot")
	require.NoError(t, os.WriteFile(outside, []byte("nothing\n"), 0o644))
	path := filepath.Join(dir, "coordinator.nk")
	require.NoError(t, os.Symlink(outside, path+".tmp"))

	require.NoError(t, writeSecret(path, []byte("SECRET\n")))
	got, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "nothing\n", string(got), "the secret went through the planted link")
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "path is a file of its own, not the link")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "SECRET\n", string(got))
	left, err := filepath.Glob(filepath.Join(dir, "coordinator.nk.*.tmp"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file left")
}

// A refusal counts for the subject named, or for any under a subject
// ending in ".>", and for no other.
func TestRefusedOn(t *testing.T) {
	t.Parallel()
	refused := func(subject string) error {
		return fmt.Errorf("nats: Permissions Violation for Publish to %q", subject)
	}
	for _, c := range []struct {
		err     error
		subject string
		want    bool
	}{
		{refused("$JS.API.STREAM.CREATE.MDAP_TASKS"), "$JS.API.STREAM.CREATE.MDAP_TASKS", true},
		{refused("$JS.API.STREAM.CREATE.MDAP_TASKS"), "$JS.API.STREAM.CREATE.MDAP_JOURNALS", false},
		{refused("$JS.API.STREAM.CREATE.KV_MDAP_RESULTS"), "$JS.API.STREAM.CREATE.>", true},
		{refused("$JS.API.STREAM.DELETE.MDAP_TASKS"), "$JS.API.STREAM.CREATE.>", false},
		{refused("mdap.agent.tasks.q1"), "mdap.agent.tasks.q", false},
		{errors.New("nats: timeout"), "$JS.API.STREAM.CREATE.>", false},
	} {
		assert.Equal(t, c.want, refusedOn(c.err, c.subject), "%v on %s", c.err, c.subject)
	}
}
