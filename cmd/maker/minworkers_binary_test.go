package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryMinWorkers: with one worker identity serving, maker hanoi
// --nats --min-workers 2 fails (no step has two workers' votes) and the
// default settles on 1; with two, both settle on 2 and solve the run
// with no wrong step; a bad --min-workers, or one without --nats, exits
// 2 naming it. maker solve --nats takes --min-workers the same way (its
// one task fails with one identity, is solved with two) and lists the
// quarantined workers in --json.
func TestBinaryMinWorkers(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--nats", "nats://127.0.0.1:1", "--min-workers", "-1"},
		{"--nats", "nats://127.0.0.1:1", "--min-workers", "70000"},
		{"--min-workers", "2"},
	} {
		c := start(t, nil, append([]string{"hanoi", "--disks", "3"}, args...)...)
		assert.Equal(t, 2, c.wait(t, 30*time.Second), "%v: %s", args, c.stderr.String())
		assert.Contains(t, c.stderr.String(), "--min-workers", args)
	}
	help := start(t, nil, "hanoi", "--help")
	require.Equal(t, 0, help.wait(t, 30*time.Second))
	assert.Contains(t, help.stdout.String(), "--min-workers")

	url := startNATS(t)
	creds := childGetenv(t, cluster.CredsEnv)
	hanoi := func(extra ...string) *child {
		args := append([]string{"hanoi", "--disks", "3", "--json", "--k", "3", "--nats", url}, natsSim...)
		return start(t, nil, append(args, extra...)...)
	}
	var out string // the last solve's results
	solve := func(id string, extra ...string) *child {
		// A task of its own: a batch's queue, and the results on it,
		// are named after the tasks file's content.
		tasks := filepath.Join(t.TempDir(), "tasks.jsonl")
		require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "`+id+`", "hanoi": {"disks": 3}}`+"\n"), 0o600))
		out = filepath.Join(t.TempDir(), "results.jsonl")
		args := append([]string{"solve", tasks, "--out", out, "--json", "--k", "3", "--seed", "11", "--nats", url}, natsSim...)
		return start(t, nil, append(args, extra...)...)
	}
	var workers []*child
	for i, name := range []string{"gpu1", "gpu2"} {
		add := start(t, nil, "nats", "worker", "add", name, "--creds", creds)
		require.Equal(t, 0, add.wait(t, 30*time.Second), add.stderr.String())
		seed := strings.TrimSpace(add.stdout.String())
		kept := filepath.Join(t.TempDir(), name+".nk")
		b, err := os.ReadFile(seed)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(kept, b, 0o600))
		workers = append(workers, kept2worker(t, url, kept))
		if i > 0 {
			break
		}
		// One worker identity: 2 distinct workers can never be had, and
		// the default settles on 1.
		one := hanoi("--min-workers", "2")
		assert.Equal(t, 1, one.wait(t, 2*time.Minute), one.stderr.String())
		assert.Contains(t, one.stderr.String(), "1 distinct voters, 2 needed")
		def := hanoi("--journal", "nats:min-workers")
		require.Equal(t, 0, def.wait(t, 2*time.Minute), def.stderr.String())
		// The engine refuses the shared coordinator a run stream of its
		// own (mdap.engine.journal.<run>): mdap asks, and takes the
		// refusal as its answer. nats.go's default handler printed it.
		assert.NotContains(t, def.stderr.String(), "ermissions violation", "a refusal mdap asks for is not printed")
		assert.Equal(t, 1, summary(t, def).MinWorkers)
		// maker solve takes --min-workers too: its one task fails.
		one = solve("one", "--min-workers", "2")
		assert.Equal(t, 1, one.wait(t, 2*time.Minute), one.stderr.String())
		res, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(res), "1 distinct voters, 2 needed")
	}
	time.Sleep(2 * time.Second) // the engine sees both pull
	for _, extra := range [][]string{{"--min-workers", "2"}, nil} {
		c := hanoi(extra...)
		require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
		got := summary(t, c)
		assert.True(t, got.Solved, extra)
		assert.Zero(t, got.WrongSteps)
		assert.Equal(t, 2, got.MinWorkers, "%v: two worker identities serve", extra)
		assert.Empty(t, got.Quarantined)
	}
	c := solve("two", "--min-workers", "2")
	code := c.wait(t, 2*time.Minute)
	res, _ := os.ReadFile(out)
	require.Equal(t, 0, code, "%s\n%s", c.stderr.String(), res)
	var sum struct {
		Solved      int               `json:"solved"`
		Quarantined []json.RawMessage `json:"quarantined"`
	}
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &sum), c.stdout.String())
	assert.Equal(t, 1, sum.Solved, c.stdout.String())
	assert.Empty(t, sum.Quarantined, "two honest workers: nobody quarantined")
	stopWorkers(t, workers...)
}

// kept2worker starts maker worker signed in with the seed kept, once
// maker nats has read the identity in.
func kept2worker(t *testing.T, url, kept string) *child {
	t.Helper()
	time.Sleep(2 * cluster.CredsEvery) // maker nats reads the folder again
	w := startWorker(t, url, "--nats-creds", kept)
	require.Eventually(t, func() bool { return strings.Contains(w.stderr.String(), "serving") }, time.Minute, 10*time.Millisecond, w.stderr.String())
	return w
}
