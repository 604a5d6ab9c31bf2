package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrapeBatch reads mdap_batch_tasks by state from a /metrics page; nil
// when the page cannot be read or has no such series.
func scrapeBatch(url string) map[string]int {
	resp, err := http.Get(url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	var got map[string]int
	for _, m := range regexp.MustCompile(`(?m)^mdap_batch_tasks\{[^}]*state="(\w+)"[^}]*\} (\S+)$`).FindAllStringSubmatch(string(page), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		if got == nil {
			got = map[string]int{}
		}
		got[m[1]] = int(v)
	}
	return got
}

// TestBinarySolveOverNATSBatchGauge: maker solve --nats --metrics-addr
// serves the batch gauge (mdap_batch_tasks) while its tasks run, as a
// local solve does: tasks running while they run, and done before the
// batch ends; it was set only at the end of the batch (no series while
// it ran).
func TestBinarySolveOverNATSBatchGauge(t *testing.T) {
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
		lines = append(lines, fmt.Sprintf(`{"id": "h%d", "hanoi": {"disks": 8}}`, i))
	}
	require.NoError(t, os.WriteFile(tasks, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	solve := start(t, nil, "solve", tasks, "--out", filepath.Join(dir, "results.jsonl"), "--nats", srv.ClientURL(),
		"--concurrency", "2", "--progress", "off", "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "1m")
	addr := regexp.MustCompile(`metrics at (http://127\.0\.0\.1:\d+/metrics)`)
	var url string
	require.Eventually(t, func() bool {
		m := addr.FindStringSubmatch(solve.stderr.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, time.Minute, 10*time.Millisecond, solve.stderr.String())

	// Until every task is done: the most tasks seen running, and whether
	// a task was seen done while others were still queued or running.
	maxRunning, doneEarly := 0, false
	var last map[string]int
	require.Eventually(t, func() bool {
		got := scrapeBatch(url)
		if got == nil {
			return false
		}
		last = got
		maxRunning = max(maxRunning, got["running"])
		if got["done"] > 0 && got["queued"]+got["running"] > 0 {
			doneEarly = true
		}
		return got["done"] == 4
	}, 3*time.Minute, 20*time.Millisecond, "the gauge: %v; %s", last, solve.stderr.String())
	assert.Equal(t, 2, maxRunning, "--concurrency 2: two tasks seen running at once")
	assert.True(t, doneEarly, "a task seen done before the batch ended")
	assert.Equal(t, map[string]int{"queued": 0, "running": 0, "done": 4, "failed": 0}, last)
	require.NoError(t, solve.cmd.Process.Signal(os.Interrupt)) // ends the linger
	assert.Equal(t, 0, solve.wait(t, time.Minute), solve.stderr.String())
}
