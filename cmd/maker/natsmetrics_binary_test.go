package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryNATSServesTheEngineMetrics: maker nats --metrics-addr serves
// the engine's own metrics (it served only target_info): its streams'
// messages and bytes, their consumers, the workers pulling jobs, the
// clients connected and the agent's answers, each of the series
// docs/observe.md lists; a journaled run over a worker shows on them, and
// the page passes promtool check metrics (where promtool is installed).
func TestBinaryNATSServesTheEngineMetrics(t *testing.T) {
	t.Parallel()
	out, err := os.Create(filepath.Join(t.TempDir(), "nats.out"))
	require.NoError(t, err)
	defer out.Close()
	store := t.TempDir()
	setChildEnv(t, cluster.CredsEnv, filepath.Join(store, "creds"))
	// The run's own key, found in the folder by its --journal (the quick
	// start: no shared coordinator key).
	add := start(t, nil, "nats", "run", "add", "metered", "--creds", filepath.Join(store, "creds"))
	require.Equal(t, 0, add.wait(t, 30*time.Second), add.stderr.String())
	// The worker's own identity (no shared worker key either).
	wadd := start(t, nil, "nats", "worker", "add", "w1", "--creds", filepath.Join(store, "creds"))
	require.Equal(t, 0, wadd.wait(t, 30*time.Second), wadd.stderr.String())
	srv := start(t, out, "nats", "--addr", "127.0.0.1:0", "--store", store, "--ack-wait", "1s", "--metrics-addr", "127.0.0.1:0")
	var url, metrics string
	addr := regexp.MustCompile(`metrics at (http://127\.0\.0\.1:\d+/metrics)`)
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(out.Name())
		url, _, _ = strings.Cut(string(b), "\n")
		if m := addr.FindStringSubmatch(srv.stderr.String()); m != nil {
			metrics = m[1]
		}
		return strings.HasPrefix(url, "nats://") && metrics != ""
	}, 20*time.Second, 10*time.Millisecond, srv.stderr.String())
	defer func() {
		_ = srv.cmd.Process.Signal(syscall.SIGTERM)
		assert.Equal(t, 0, srv.wait(t, 30*time.Second), srv.stderr.String())
	}()
	w := startWorker(t, url, "--inflight", "2")
	defer stopWorkers(t, w)
	run := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--journal", "nats:metered", "--progress", "off"}, natsSim...)...)
	require.Equal(t, 0, run.wait(t, time.Minute), run.stderr.String())

	var page string
	series := map[string]float64{}
	require.Eventually(t, func() bool { // the worker pulls again within a second
		resp, err := http.Get(metrics)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page = string(b)
		series = map[string]float64{}
		for _, m := range regexp.MustCompile(`(?m)^(mdap_engine_\w+(?:\{[^}]*\})?) (\S+)$`).FindAllStringSubmatch(page, -1) {
			series[m[1]], _ = strconv.ParseFloat(m[2], 64)
		}
		return series["mdap_engine_workers"] == 1
	}, 30*time.Second, 100*time.Millisecond, "one worker pulling: %v", series)
	for _, s := range []string{"MDAP_JOBS", "MDAP_REPLIES", "MDAP_JOURNALS", "MDAP_TASKS", "KV_MDAP_LEASES", "KV_MDAP_RESULTS"} {
		for _, name := range []string{"stream_messages", "stream_bytes", "stream_consumers", "consumer_undelivered", "consumer_ack_pending", "consumer_waiting"} {
			assert.Contains(t, series, "mdap_engine_"+name+`{stream="`+s+`"}`)
		}
	}
	// The run key's journal lines, on its own stream: the run keys'
	// streams are one series.
	assert.Positive(t, series[`mdap_engine_stream_messages{stream="MDAP_RUN_*"}`], "the run's journal lines")
	assert.Positive(t, series[`mdap_engine_stream_bytes{stream="MDAP_RUN_*"}`])
	assert.Equal(t, 1.0, series[`mdap_engine_stream_consumers{stream="MDAP_JOBS"}`], "one route served")
	assert.Positive(t, series[`mdap_engine_consumer_waiting{stream="MDAP_JOBS"}`]+series[`mdap_engine_consumer_ack_pending{stream="MDAP_JOBS"}`], "the worker pulling")
	assert.GreaterOrEqual(t, series["mdap_engine_connections"], 2.0, "the engine's own and the worker's")
	assert.Positive(t, series[`mdap_engine_requests_total{outcome="served"}`], "the worker's pulls, the run's consumers")
	assert.Contains(t, series, `mdap_engine_requests_total{outcome="refused"}`)

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool is not installed: the page is not checked by it")
		return
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(page)
	var msg bytes.Buffer
	check.Stdout, check.Stderr = &msg, &msg
	assert.NoError(t, check.Run(), msg.String())
	assert.Empty(t, msg.String(), "promtool's warnings")
}
