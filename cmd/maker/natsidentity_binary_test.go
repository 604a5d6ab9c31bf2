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

// TestBinaryNATSWorkerIdentitiesByDefault: a fresh maker nats makes no
// shared worker key (worker.nk, which acts as every worker). A worker
// signed in with an identity of its own (maker nats worker add) serves a
// run; once revoked it is cut off and signs in no more. Among several
// identities in a folder a worker must choose (--identity), and a folder
// with none is a usage error naming maker nats worker add. The shared key
// is made and accepted only with --shared-worker: its worker.pub planted
// in a default engine's folder is refused, with a hint naming the flag.
// --help names the flag's risk.
func TestBinaryNATSWorkerIdentitiesByDefault(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	creds := filepath.Join(store, "creds")
	_, err := cluster.AddRunCoordinator(creds, "idrun")
	require.NoError(t, err)
	url, srv := startNATSIn(t, store)
	assert.NoFileExists(t, cluster.SeedFile(creds, cluster.RoleWorker))
	assert.NoFileExists(t, cluster.PubFile(creds, cluster.RoleWorker))
	assert.Contains(t, srv.stderr.String(), "maker nats worker add NAME")

	// Several identities in the folder and none chosen; none at all.
	several := start(t, nil, append([]string{"worker", "--nats", url}, natsSim...)...)
	assert.Equal(t, 2, several.wait(t, 30*time.Second), several.stderr.String())
	assert.Contains(t, several.stderr.String(), "--identity NAME")
	empty := t.TempDir()
	none := start(t, nil, append([]string{"worker", "--nats", url, "--nats-creds", empty}, natsSim...)...)
	assert.Equal(t, 2, none.wait(t, 30*time.Second), none.stderr.String())
	assert.Contains(t, none.stderr.String(), "maker nats worker add NAME")
	unknown := start(t, nil, append([]string{"worker", "--nats", url, "--identity", "nobody"}, natsSim...)...)
	assert.Equal(t, 2, unknown.wait(t, 30*time.Second), unknown.stderr.String())
	assert.Contains(t, unknown.stderr.String(), "maker nats worker add nobody")

	// An issued identity serves a run.
	w := startWorker(t, url)
	run := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--journal", "nats:idrun", "--json", "--progress", "off"}, natsSim...)...)
	require.Equal(t, 0, run.wait(t, 2*time.Minute), run.stderr.String())
	assert.True(t, summary(t, run).Solved)

	// Revoked, it is cut off and refused from then on.
	rv := start(t, nil, "nats", "worker", "revoke", "w1", "--creds", creds)
	require.Equal(t, 0, rv.wait(t, 30*time.Second), rv.stderr.String())
	assert.Eventually(t, func() bool { return strings.Contains(srv.stderr.String(), "closed 1 connection") }, 20*time.Second, 10*time.Millisecond, srv.stderr.String())
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	_ = w.wait(t, 30*time.Second)
	// Revoking removed the folder's copy; the worker's machine kept its
	// own: w2's, copied away, then revoked.
	kept := filepath.Join(t.TempDir(), "w2.nk")
	seed, err := os.ReadFile(filepath.Join(creds, "workers", "w2.nk"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(kept, seed, 0o600))
	rv2 := start(t, nil, "nats", "worker", "revoke", "w2", "--creds", creds)
	require.Equal(t, 0, rv2.wait(t, 30*time.Second), rv2.stderr.String())
	time.Sleep(2 * cluster.CredsEvery)
	again := start(t, nil, append([]string{"worker", "--nats", url, "--nats-creds", kept}, natsSim...)...)
	assert.Equal(t, 1, again.wait(t, time.Minute), "a revoked identity signs in again: %s", again.stderr.String())
	assert.Contains(t, again.stderr.String(), "refused")

	// The shared key, opted in: made, 0600, and its holder serves.
	shared := t.TempDir()
	sharedURL, _ := startNATSIn(t, shared, "--shared-worker")
	sharedSeed := cluster.SeedFile(filepath.Join(shared, "creds"), cluster.RoleWorker)
	st, err := os.Stat(sharedSeed)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	sw := start(t, nil, append([]string{"worker", "--nats", sharedURL, "--nats-creds", sharedSeed}, natsSim...)...)
	require.Eventually(t, func() bool { return strings.Contains(sw.stderr.String(), "serving") }, time.Minute, 10*time.Millisecond, sw.stderr.String())
	stopWorkers(t, sw)

	// Its worker.pub planted in the default engine's folder is not
	// accepted, even after a reload.
	pub, err := os.ReadFile(cluster.PubFile(filepath.Join(shared, "creds"), cluster.RoleWorker))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cluster.PubFile(creds, cluster.RoleWorker), pub, 0o600))
	time.Sleep(2 * cluster.CredsEvery)
	planted := start(t, nil, append([]string{"worker", "--nats", url, "--nats-creds", sharedSeed}, natsSim...)...)
	assert.Equal(t, 1, planted.wait(t, time.Minute), planted.stderr.String())
	assert.Contains(t, planted.stderr.String(), "--shared-worker")

	help := start(t, nil, "nats", "--help")
	require.Equal(t, 0, help.wait(t, 30*time.Second))
	assert.Contains(t, help.stdout.String(), "--shared-worker")
	assert.Regexp(t, `shared-worker[^\n]*RISK`, help.stdout.String())
	whelp := start(t, nil, "worker", "--help")
	require.Equal(t, 0, whelp.wait(t, 30*time.Second))
	assert.Contains(t, whelp.stdout.String(), "--identity")
}
