package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServeSimRefusesBadFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noScript := filepath.Join(dir, "no-script.json")
	require.NoError(t, os.WriteFile(noScript, []byte(`{"system":"x","answer":{"type":"object"}}`), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:8090"}, "--addr \"0.0.0.0:8090\": it listens on 0.0.0.0, and the server has no authentication: use a loopback address such as 127.0.0.1:8090, or allow other hosts with --allow-remote"},
		{[]string{"--addr", ":8090"}, "--allow-remote"},
		{[]string{"--addr", "192.168.1.1:80"}, "--allow-remote"},
		{[]string{"--addr", "127.0.0.1"}, "--addr \"127.0.0.1\": want HOST:PORT"},
		{[]string{"--addr", "127.0.0.1:99999", "--allow-remote"}, "a port from 0 to 65535"},
		{[]string{"--fault-429", "1.5"}, "--fault-429 1.5: use a fraction from 0 to 1"},
		{[]string{"--fault-hang", "-0.1"}, "--fault-hang -0.1: use a fraction from 0 to 1"},
		{[]string{"--fault-truncate", "NaN"}, "--fault-truncate NaN"},
		{[]string{"--fault-500", "0.6", "--fault-garbage", "0.6"}, "add up to 1.2"},
		{[]string{"--fault-500", "0.6", "--fault-garbage", "0.6"}, "--fault-500 0.6 plus --fault-garbage 0.6: add up to 1.2; they must add up to at most 1"},
		{[]string{"--fault-429", "1", "--retry-after", "4000"}, "--retry-after 4000: use 0 to 3600 seconds"},
		{[]string{"--retry-after", "-1"}, "--retry-after -1: use 0 to 3600"},
		{[]string{"--retry-after", "3601"}, "--retry-after 3601"},
		{[]string{"--p", "0"}, "--p 0: use a probability above 0, up to 1"},
		{[]string{"--flag-rate", "0.7", "--error-rate", "0.7"}, "must add up to at most 1"},
		{[]string{"--latency-sigma", "1"}, "--latency-sigma needs --latency"},
		{[]string{"--wrong-answers", "0"}, "--wrong-answers 0"},
		{[]string{"--task", "chess"}, "--task \"chess\": use hanoi, or spec"},
		{[]string{"--task", "spec"}, "--task spec needs --spec FILE"},
		{[]string{"--task", "hanoi", "--spec", noScript}, "--spec applies to --task spec"},
		{[]string{"--spec", filepath.Join(dir, "missing.json")}, "--spec:"},
		{[]string{"--spec", noScript}, "has no \"script\""},
		{[]string{"--model-name", ""}, "--model-name"},
		{[]string{"--cache-min-tokens", "0"}, "--cache-min-tokens 0: use a positive value, or leave the flag out for 1024"},
		{[]string{"--cache-min-tokens", "-5"}, "--cache-min-tokens -5: use a positive number of tokens"},
		{[]string{"--cache-block-tokens", "-1"}, "--cache-block-tokens -1: use a positive number of tokens"},
		{[]string{"--cache-entries", "0"}, "--cache-entries 0: use a positive value, or leave the flag out for 65536"},
		{[]string{"--cache-ttl", "-1s"}, "--cache-ttl -1s: use a positive duration such as 5m"},
		{[]string{"--reasoning-tokens", "65537"}, "--reasoning-tokens 65537: use 0 to 65536"},
		{[]string{"--k", "3"}, "unknown flag: --k"},
		{[]string{"extra"}, "unknown command"},
	} {
		code, out, errOut := cli(t, append([]string{"serve-sim"}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, errOut)
		assert.Empty(t, out, "%v: nothing on stdout", tc.args)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
	}
}

// simServer starts a simulated OpenAI-compatible server in-process on
// loopback and returns its base URL.
func simServer(t *testing.T, cfg simserver.Config) (*simserver.Server, string) {
	t.Helper()
	s, err := simserver.New(cfg)
	require.NoError(t, err)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(s.Close)
	return s, hs.URL + "/v1"
}

func TestHanoiAgainstServeSim(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 5, 0.95, 0.02
	s, base := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	code, sum := hanoiJSON(t, "--disks", "6", "--model", "openai:sim", "--base-url", base)
	assert.Equal(t, 0, code, "%+v", sum)
	assert.True(t, sum.Solved)
	assert.Zero(t, sum.WrongSteps)
	assert.Equal(t, 63, sum.Steps)
	assert.Equal(t, "openai:sim", sum.Model)
	assert.Equal(t, uint64(sum.Samples), s.Stats().Requests, "every sample went through the server")

	// The sim flags stay the server's: maker hanoi refuses them with a
	// real model.
	code, _, errOut := cli(t, "hanoi", "--disks", "3", "--model", "openai:sim", "--base-url", base, "--p", "0.9")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--p applies to --model sim only")
}

// startServeSim starts the binary's serve-sim with args and returns the
// child and the base URL it printed.
func startServeSim(t *testing.T, args ...string) (*child, string) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	c := start(t, w, append([]string{"serve-sim", "--addr", "127.0.0.1:0"}, args...)...)
	require.NoError(t, w.Close())
	t.Cleanup(func() { r.Close() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			c.wait(t, 10*time.Second)
			t.Fatalf("serve-sim printed nothing; stderr: %s", c.stderr.String())
		}
		base, found := strings.CutPrefix(l, "listening on ")
		require.True(t, found, "%q", l)
		require.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*/v1$`, base)
		return c, base
	case <-time.After(30 * time.Second):
		t.Fatal("serve-sim did not print its address")
		return nil, ""
	}
}

func TestBinaryServeSim(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		srv, base := startServeSim(t, "--p", "0.95", "--seed", "3", "--fault-500", "0.05")

		resp, err := http.Get(base + "/models")
		require.NoError(t, err)
		var models struct{ Data []struct{ ID string } }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&models))
		resp.Body.Close()
		require.Len(t, models.Data, 1)
		assert.Equal(t, "sim", models.Data[0].ID)

		// Another maker process solves through it.
		solver := start(t, nil, "hanoi", "--disks", "4", "--model", "openai:sim", "--base-url", base, "--json")
		assert.Equal(t, 0, solver.wait(t, time.Minute), solver.stderr.String())
		var sum hanoiSummary
		require.NoError(t, json.Unmarshal(solver.stdout.Bytes(), &sum))
		assert.True(t, sum.Solved)
		assert.Equal(t, 15, sum.Steps)

		require.NoError(t, srv.cmd.Process.Signal(sig))
		assert.Equal(t, 0, srv.wait(t, 10*time.Second), "%s: a graceful stop; stderr: %s", sig, srv.stderr.String())
		assert.Contains(t, srv.stderr.String(), "msg=stopped requests=")
	}
}

func TestBinaryServeSimStopsWithARequestHanging(t *testing.T) {
	t.Parallel()
	metrics := freePort(t)
	srv, base := startServeSim(t, "--fault-hang", "1", "--metrics-addr", metrics)
	body, err := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}})
	require.NoError(t, err)
	answered := make(chan error, 1)
	go func() {
		resp, err := http.Post(base+"/chat/completions", "application/json", bytes.NewReader(body))
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	// It hangs once the server counted its fault: a fixed wait could end,
	// on a loaded machine, before the request even arrived, and the stop
	// would then prove nothing about a hanging request.
	faults := func() float64 {
		resp, err := http.Get("http://" + metrics + "/metrics")
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		return promValues(string(page), "mdap_simserver_requests_total")[`{outcome="fault"}`]
	}
	require.Eventually(t, func() bool { return faults() == 1 }, 30*time.Second, 10*time.Millisecond, "the request reaches its hang")
	select {
	case err := <-answered:
		t.Fatalf("the request was answered: %v", err)
	default:
	}
	start := time.Now()
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, srv.wait(t, 10*time.Second), srv.stderr.String())
	assert.Less(t, time.Since(start), simserver.ShutdownGrace, "the hang is released at once")
	assert.Error(t, <-answered, "the hanging request ends without an answer")
}
