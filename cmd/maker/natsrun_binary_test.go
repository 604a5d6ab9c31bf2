package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryNATSRunIdentities: maker nats run add issues the key of one
// run (mode 0600); a run signed in with it keeps its journal on the
// engine, while the same key is refused another run's journal at once
// (exit 2, naming the refusal); ls lists it; a bad name, a run issued twice or an
// unknown one exit 2; add --bytes sets its journal budget, keeping its
// key; revoke removes it.
func TestBinaryNATSRunIdentities(t *testing.T) {
	t.Parallel()
	url := startNATS(t)
	creds := childGetenv(t, cluster.CredsEnv)
	add := start(t, nil, "nats", "run", "add", "mine", "--creds", creds)
	require.Equal(t, 0, add.wait(t, 30*time.Second), add.stderr.String())
	seed := strings.TrimSpace(add.stdout.String())
	assert.Equal(t, filepath.Join(creds, "runs", "mine.nk"), seed)
	st, err := os.Stat(seed)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	for _, args := range [][]string{{"add", "mine"}, {"add", "a.b"}, {"revoke", "nobody"}} {
		c := start(t, nil, append([]string{"nats", "run", "--creds", creds}, args...)...)
		assert.Equal(t, 2, c.wait(t, 30*time.Second), "%v: %s", args, c.stderr.String())
	}
	ls := start(t, nil, "nats", "run", "ls", "--creds", creds)
	require.Equal(t, 0, ls.wait(t, 30*time.Second))
	assert.Regexp(t, `^mine\tU[A-Z0-9]{55}\n$`, ls.stdout.String())
	// Its journal budget, set again with its key kept; too small exits 2.
	key := mustRead(t, seed)
	b := start(t, nil, "nats", "run", "add", "mine", "--bytes", "65536", "--creds", creds)
	require.Equal(t, 0, b.wait(t, 30*time.Second), b.stderr.String())
	assert.Contains(t, b.stderr.String(), "the journal budget of mine is 65536 bytes")
	assert.Equal(t, key, mustRead(t, seed), "its key unchanged")
	assert.Equal(t, "65536\n", string(mustRead(t, filepath.Join(creds, "runs", "mine.bytes"))))
	small := start(t, nil, "nats", "run", "add", "mine", "--bytes", "10", "--creds", creds)
	assert.Equal(t, 2, small.wait(t, 30*time.Second), small.stderr.String())
	assert.Contains(t, small.stderr.String(), "--bytes 10")

	w := startWorker(t, url)
	time.Sleep(2 * cluster.CredsEvery) // maker nats reads the folder again
	own := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--nats-creds", seed, "--journal", "nats:mine", "--json", "--progress", "off"}, natsSim...)...)
	require.Equal(t, 0, own.wait(t, 2*time.Minute), "its own run: %s", own.stderr.String())
	began := time.Now()
	other := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--nats-creds", seed, "--journal", "nats:theirs", "--json", "--progress", "off"}, natsSim...)...)
	assert.Equal(t, 2, other.wait(t, 2*time.Minute), "another run (the wrong credential): %s", other.stderr.String())
	assert.Contains(t, other.stderr.String(), "MDAP_LEASES.theirs")
	assert.Contains(t, other.stderr.String(), "maker nats run add theirs")
	assert.Less(t, time.Since(began), 20*time.Second, "refused at once, not after a deadline")
	stopWorkers(t, w)

	rv := start(t, nil, "nats", "run", "revoke", "mine", "--creds", creds)
	require.Equal(t, 0, rv.wait(t, 30*time.Second), rv.stderr.String())
	assert.Equal(t, "revoked mine\n", rv.stdout.String())
	_, err = os.Stat(seed)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.NoFileExists(t, filepath.Join(creds, "runs", "mine.bytes"), "its budget forgotten")
}

// TestBinarySolveWithARunKey: a batch runs on a run's key alone, its task
// queue named by --queue (a key cannot name the default queue, a hash of
// the tasks file, in advance); the key of another queue, or none named,
// is refused at once (exit 2) naming --queue, with nothing written.
func TestBinarySolveWithARunKey(t *testing.T) {
	t.Parallel()
	url := startNATS(t)
	creds := childGetenv(t, cluster.CredsEnv)
	add := start(t, nil, "nats", "run", "add", "nightly", "--creds", creds)
	require.Equal(t, 0, add.wait(t, 30*time.Second), add.stderr.String())
	seed := strings.TrimSpace(add.stdout.String())
	w := startWorker(t, url)
	defer stopWorkers(t, w)
	time.Sleep(2 * cluster.CredsEvery) // maker nats reads the folder again

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 3}}`+"\n"+`{"id": "b", "hanoi": {"disks": 4}}`+"\n"), 0o644))
	solve := func(out string, extra ...string) *child {
		args := append([]string{"solve", tasks, "--out", out, "--nats", url, "--nats-creds", seed, "--progress", "off"}, natsSim...)
		return start(t, nil, append(args, extra...)...)
	}
	for _, extra := range [][]string{nil, {"--queue", "other"}} {
		out := filepath.Join(dir, "refused.jsonl")
		began := time.Now()
		c := solve(out, extra...)
		assert.Equal(t, 2, c.wait(t, time.Minute), "%v: %s", extra, c.stderr.String())
		assert.Contains(t, c.stderr.String(), "--queue NAME", extra)
		assert.Less(t, time.Since(began), 20*time.Second, "refused at once, not after a deadline")
		assert.NoFileExists(t, out, "nothing written")
	}
	out := filepath.Join(dir, "results.jsonl")
	c := solve(out, "--queue", "nightly")
	require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
	got := readResults(t, out)
	require.Len(t, got, 2)
	for id, r := range got {
		assert.Equal(t, batch.StatusSolved, r.Status, id)
	}

	// A credentials folder holding the run's key (runs/nightly.nk) and no
	// shared coordinator key: --queue names the key to take from it.
	folder := filepath.Join(t.TempDir(), "creds")
	require.NoError(t, os.MkdirAll(filepath.Join(folder, "runs"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(folder, "runs", "nightly.nk"), mustRead(t, seed), 0o600))
	again := filepath.Join(dir, "again.jsonl")
	args := append([]string{"solve", tasks, "--out", again, "--nats", url, "--nats-creds", folder, "--progress", "off", "--queue", "nightly"}, natsSim...)
	c = start(t, nil, args...)
	require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
	assert.Len(t, readResults(t, again), 2)
}
