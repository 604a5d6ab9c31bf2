package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinarySolveOverNATSSummaryIsTrue: maker solve --nats --json, stopped
// with SIGINT while its tasks are half done and run again, reports the
// steps it replayed from the tasks' journals ("resumed"), and a wall time that covers the
// tasks it solved (it reported about 3e-5 s, the time of summing up, and
// "resumed": 0 after four tasks resumed). The results are a local
// batch's.
func TestBinarySolveOverNATSSummaryIsTrue(t *testing.T) {
	t.Parallel()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	c := sim.DefaultConfig()
	c.Seed = 1
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	runSimWorker(ctx, t, &wg, srv.ClientURL(), c)

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	var lines []string
	for i := range 4 {
		lines = append(lines, fmt.Sprintf(`{"id": "h%d", "hanoi": {"disks": %d}}`, i, 8+i%2))
	}
	require.NoError(t, os.WriteFile(tasks, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	code, _, errOut := cli(t, "solve", tasks, "--out", filepath.Join(dir, "local.jsonl"), "--progress", "off")
	require.Equal(t, 0, code, errOut)
	local := readResults(t, filepath.Join(dir, "local.jsonl"))

	out := filepath.Join(dir, "nats.jsonl")
	args := []string{"solve", tasks, "--out", out, "--nats", srv.ClientURL(), "--concurrency", "4", "--progress", "off", "--json"}
	first := start(t, nil, args...)
	nc, err := cluster.Connect(srv.ClientURL(), t.Name())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	require.Eventually(t, func() bool { // every task has journaled steps
		list, err := cluster.List(ctx, js)
		if err != nil {
			return false
		}
		n := 0
		for _, l := range list {
			if l.Kind == "journal" && l.Messages > 2 {
				n++
			}
		}
		return n == 4
	}, 2*time.Minute, 50*time.Millisecond, first.stderr.String())
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, exitAborted, first.wait(t, time.Minute), first.stderr.String())

	began := time.Now()
	again := start(t, nil, args...)
	require.Equal(t, 0, again.wait(t, 3*time.Minute), again.stderr.String())
	took := time.Since(began)
	var sum solveSummary
	require.NoError(t, json.Unmarshal(again.stdout.Bytes(), &sum), again.stdout.String())
	got := readResults(t, out)
	require.Len(t, got, 4)
	slowest := 0.0
	for id, want := range local {
		assert.Equal(t, want.Status, got[id].Status, id)
		assert.Equal(t, want.Steps, got[id].Steps, id)
		assert.Equal(t, want.Valid, got[id].Valid, id)
		slowest = max(slowest, got[id].WallSeconds)
	}
	assert.Positive(t, sum.Resumed, "the tasks resumed from their journals: %s", again.stdout.String())
	assert.GreaterOrEqual(t, sum.WallSeconds, slowest, "the batch took at least as long as its slowest task this run")
	assert.LessOrEqual(t, sum.WallSeconds, took.Seconds())

}

// TestBinarySolveOverNATSFaultSaysWhereTheResultsAre: a batch stopped by
// a fault (no worker serves its route) says how many results its --out
// holds, as many as it does; it said "the results so far in FILE" of an
// empty FILE.
func TestBinarySolveOverNATSFaultSaysWhereTheResultsAre(t *testing.T) {
	t.Parallel()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "h", "hanoi": {"disks": 2}}`+"\n"), 0o644))
	results := filepath.Join(dir, "results.jsonl")
	c := start(t, nil, "solve", tasks, "--out", results, "--nats", srv.ClientURL(), "--progress", "off", "--max-errors", "1")
	require.Equal(t, 1, c.wait(t, 90*time.Second), c.stderr.String())
	assert.NotContains(t, c.stderr.String(), "the results so far in", "a claim of results in an empty file")
	m := regexp.MustCompile(`(\d+|no) results? in ` + regexp.QuoteMeta(results)).FindStringSubmatch(c.stderr.String())
	require.NotNil(t, m, "the message says how many results the file holds: %s", c.stderr.String())
	n := 0
	if m[1] != "no" {
		n, _ = strconv.Atoi(m[1])
	}
	assert.Equal(t, countLines(results), n, c.stderr.String())
}
