package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryNATSWorkerIdentities: maker nats worker add issues a key
// (mode 0600) a worker signs in with; ls lists it; revoke removes it, and
// the running maker nats closes the worker's connection within seconds
// and says so. A name issued twice, a bad name or an unknown one exit 2.
func TestBinaryNATSWorkerIdentities(t *testing.T) {
	t.Parallel()
	out, err := os.Create(filepath.Join(t.TempDir(), "nats.out"))
	require.NoError(t, err)
	defer out.Close()
	store := t.TempDir()
	creds := filepath.Join(store, "creds")
	setChildEnv(t, cluster.CredsEnv, creds)
	srv := start(t, out, "nats", "--addr", "127.0.0.1:0", "--store", store)
	var url string
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(out.Name())
		url, _, _ = strings.Cut(string(b), "\n")
		return strings.HasPrefix(url, "nats://") && strings.Contains(string(b), "\n")
	}, 20*time.Second, 10*time.Millisecond)

	add := start(t, nil, "nats", "worker", "add", "gpu1", "--creds", creds)
	require.Equal(t, 0, add.wait(t, 30*time.Second), add.stderr.String())
	seed := strings.TrimSpace(add.stdout.String())
	assert.Equal(t, filepath.Join(creds, "workers", "gpu1.nk"), seed)
	st, err := os.Stat(seed)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	for _, args := range [][]string{{"add", "gpu1"}, {"add", "a.b"}, {"revoke", "nobody"}} {
		c := start(t, nil, append([]string{"nats", "worker", "--creds", creds}, args...)...)
		assert.Equal(t, 2, c.wait(t, 30*time.Second), "%v: %s", args, c.stderr.String())
	}
	ls := start(t, nil, "nats", "worker", "ls", "--creds", creds)
	require.Equal(t, 0, ls.wait(t, 30*time.Second))
	assert.Regexp(t, `^gpu1\tU[A-Z0-9]{55}\n$`, ls.stdout.String())

	// The worker's machine has its copy of the seed.
	kept := filepath.Join(t.TempDir(), "gpu1.nk")
	b, err := os.ReadFile(seed)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(kept, b, 0o600))
	time.Sleep(2 * cluster.CredsEvery) // maker nats reads the folder again
	w := start(t, nil, append([]string{"worker", "--nats", url, "--nats-creds", kept}, natsSim...)...)
	require.Eventually(t, func() bool { return strings.Contains(w.stderr.String(), "serving") }, time.Minute, 10*time.Millisecond, "the issued worker signs in: %s", w.stderr.String())

	rv := start(t, nil, "nats", "worker", "revoke", "gpu1", "--creds", creds)
	require.Equal(t, 0, rv.wait(t, 30*time.Second), rv.stderr.String())
	assert.Equal(t, "revoked gpu1\n", rv.stdout.String())
	assert.Eventually(t, func() bool { return strings.Contains(srv.stderr.String(), "closed 1 connection") }, 20*time.Second, 10*time.Millisecond,
		"maker nats cuts the revoked worker off: %s", srv.stderr.String())
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	_ = w.wait(t, 30*time.Second)
	again := start(t, nil, append([]string{"worker", "--nats", url, "--nats-creds", kept}, natsSim...)...)
	assert.Equal(t, 1, again.wait(t, time.Minute), "a revoked worker signs in again: %s", again.stderr.String())
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, srv.wait(t, 30*time.Second), srv.stderr.String())
}
