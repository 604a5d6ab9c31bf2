package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExposedMetricsNeedAToken: a --metrics-addr other machines can reach
// is refused (exit 2, nothing written) unless MDAP_METRICS_TOKEN is set.
func TestExposedMetricsNeedAToken(t *testing.T) {
	t.Setenv(metricsTokenEnv, "")
	dir := t.TempDir()
	journal := filepath.Join(dir, "run.journal")
	for _, addr := range []string{"0.0.0.0:0", ":::0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		code, out, errOut := cli(t, "hanoi", "--disks", "2", "--journal", journal, "--metrics-addr", addr)
		assert.Equal(t, 2, code, "%s: %s", addr, errOut)
		assert.Empty(t, out, addr)
		if code == 2 && addr == "0.0.0.0:0" {
			assert.Contains(t, errOut, metricsTokenEnv, "the error says how to fix it")
		}
	}
	t.Setenv(metricsTokenEnv, "has space")
	code, _, errOut := cli(t, "hanoi", "--disks", "2", "--journal", journal, "--metrics-addr", "127.0.0.1:0")
	assert.Equal(t, 2, code, errOut)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")
}

// TestMetricsTokenGuardsTheEndpoint runs the binary with its metrics on
// every interface and a token: /metrics and /readyz answer 401 without
// the token or with a wrong one and 200 with it; /healthz stays open; the
// token is never printed.
func TestMetricsTokenGuardsTheEndpoint(t *testing.T) {
	t.Parallel()
	const token = "metrics-secret-8d1f2c0b7e"
	_, port, err := net.SplitHostPort(freePort(t))
	require.NoError(t, err)
	c := &child{}
	c.cmd = commandWithEnv(binary, []string{metricsTokenEnv + "=" + token},
		"hanoi", "--disks", "3", "--json", "--progress", "off",
		"--metrics-addr", "0.0.0.0:"+port, "--metrics-linger", "30s")
	stdout, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	c.cmd.Stderr = &c.stderr
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); _ = c.cmd.Wait() })
	var sum hanoiSummary
	require.NoError(t, json.NewDecoder(bufio.NewReader(stdout)).Decode(&sum))
	require.True(t, sum.Solved)

	get := func(path, auth string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+port+path, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, path := range []string{"/metrics", "/readyz"} {
		code, body := get(path, "")
		assert.Equal(t, http.StatusUnauthorized, code, path)
		assert.NotContains(t, body, "mdap_")
		code, _ = get(path, "Bearer wrong")
		assert.Equal(t, http.StatusUnauthorized, code, path)
		code, _ = get(path, token) // no scheme
		assert.Equal(t, http.StatusUnauthorized, code, path)
	}
	code, page := get("/metrics", "Bearer "+token)
	require.Equal(t, http.StatusOK, code)
	assert.EqualValues(t, sum.Valid, promValues(page, "mdap_samples_total")[`{outcome="valid"}`])
	code, _ = get("/healthz", "")
	assert.Equal(t, http.StatusOK, code, "liveness needs no token")

	require.NoError(t, c.cmd.Process.Signal(os.Interrupt))
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, c.stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("still lingering after SIGINT")
	}
	assert.NotContains(t, c.stderr.String(), token)
}

// TestEveryWatchedCommandGuardsItsMetrics: README.md says --metrics-addr
// serves /metrics "(loopback unless a host is named, and then only behind a
// bearer token in `MDAP_METRICS_TOKEN`) on `hanoi`, `run`, `solve`,
// `worker`, `serve-sim`, `mcp --http` and `nats`". Each of those commands
// takes the flag and refuses an address other machines reach without the
// token (exit 2, naming the variable), before it writes, listens or
// connects: the state, store and output folders stay empty.
func TestEveryWatchedCommandGuardsItsMetrics(t *testing.T) {
	t.Setenv(metricsTokenEnv, "")
	readme := strings.Join(strings.Fields(string(mustRead(t, "../../README.md"))), " ")
	require.Contains(t, readme, "then only behind a bearer token in `MDAP_METRICS_TOKEN`) on `hanoi`, `run`, `solve`, `worker`, `serve-sim`, `mcp --http` and `nats`.",
		"README.md's list of the commands with --metrics-addr: keep this test's list the same")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"hanoi", "--disks", "2", "--journal", filepath.Join(dir, "j.jsonl")},
		{"run", "../../testdata/spec/find-version.json", "--journal", filepath.Join(dir, "j.jsonl")},
		{"solve", "../../testdata/batch/tasks.jsonl", "--out", filepath.Join(dir, "results.jsonl"), "--state", filepath.Join(dir, "state")},
		{"worker", "--nats", "nats://127.0.0.1:1"},
		{"serve-sim", "--addr", "127.0.0.1:0"},
		{"mcp", "--http", "127.0.0.1:0", "--root", dir, "--state", filepath.Join(dir, "journals")},
		{"nats", "--store", filepath.Join(dir, "store")},
	} {
		code, out, errOut := cli(t, append(args, "--metrics-addr", "0.0.0.0:0")...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, "--metrics-addr 0.0.0.0:0 is reachable from other machines", "%v", args)
		assert.Contains(t, errOut, metricsTokenEnv, "%v: the error says how to fix it", args)
		assert.Empty(t, out, "%v", args)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")
}
