package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestObserveFlagsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"hanoi", "--disks", "2", "--log-format", "xml"},
		{"hanoi", "--disks", "2", "--metrics-addr", "a:b:c"},
		{"hanoi", "--disks", "2", "--metrics-linger", "1s"},
		{"run", "testdata/none.json", "--log-format", "yaml"},
		{"worker", "--nats", "nats://127.0.0.1:1", "--log-format", "xml"},
		{"serve-sim", "--log-format", "xml"},
		{"mcp", "--metrics-addr", "127.0.0.1:0", "--root", dir},
		{"nats", "--store", dir, "--log-format", "xml"},
		{"nats", "--store", dir, "--monitor-addr", "nope"},
		{"nats", "--store", dir, "--monitor-addr", "0.0.0.0:8222"},
		{"nats", "--store", dir, "--monitor-addr", "[::]:0"},
		{"nats", "--store", dir, "--monitor-addr", "example.com:8222"},
	} {
		code, out, errOut := cli(t, args...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
		assert.Empty(t, out, "%v writes nothing", args)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")
}

// otlpReceiver records the bodies of OTLP/HTTP trace exports.
type otlpReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		if req.URL.Path == "/v1/traces" {
			r.mu.Lock()
			r.bodies = append(r.bodies, b)
			r.mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) all() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Join(r.bodies, nil)
}

// freePort returns a loopback address that was free a moment ago.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// promValues reads the samples of a metric from a Prometheus text page:
// labels (as written) -> value.
func promValues(page, name string) map[string]float64 {
	out := map[string]float64{}
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(\{[^}]*\})? (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		out[m[1]] = v
	}
	return out
}

// TestHanoiWatched runs maker hanoi against an OpenAI-compatible server
// with an API key, traces to an OTLP receiver, metrics on an endpoint and
// JSON logs: the scraped counters are the summary's, the spans arrive
// with their GenAI attributes, every log line carries the trace, and the
// key is in no span, no metric and no log line.
func TestHanoiWatched(t *testing.T) {
	t.Parallel()
	const key = "sk-observe-test-key-5e1f0c8d9a"
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 3, 0.95, 0.2
	_, base := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	otlp := newOTLPReceiver(t)
	addr := freePort(t)
	c := &child{}
	c.cmd = commandWithEnv(binary, []string{"OPENAI_API_KEY=" + key, "OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL, "OTEL_SERVICE_NAME=maker-test"},
		"hanoi", "--disks", "4", "--model", "openai:sim", "--base-url", base, "--json",
		"--metrics-addr", addr, "--metrics-linger", "30s", "--log-format", "json", "--verbose", "--progress", "off")
	stdout, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	c.cmd.Stderr = &c.stderr
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); _ = c.cmd.Wait() })

	// The summary is written before the linger: read it, then scrape.
	var sum hanoiSummary
	require.NoError(t, json.NewDecoder(bufio.NewReader(stdout)).Decode(&sum))
	require.True(t, sum.Solved)
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, page := get("/metrics")
	require.Equal(t, 200, code)
	samples := promValues(page, "mdap_samples_total")
	assert.EqualValues(t, sum.Valid, samples[`{outcome="valid"}`])
	assert.EqualValues(t, sum.Flagged, samples[`{outcome="flagged"}`])
	assert.EqualValues(t, sum.Errors, samples[`{outcome="error"}`])
	assert.EqualValues(t, sum.Cancelled, samples[`{outcome="cancelled"}`])
	assert.EqualValues(t, sum.Steps, promValues(page, "mdap_steps_total")[`{result="decided"}`])
	assert.EqualValues(t, sum.InputTokens, promValues(page, "mdap_tokens_total")[`{type="input"}`])
	assert.EqualValues(t, sum.OutputTokens, promValues(page, "mdap_tokens_total")[`{type="output"}`])
	assert.EqualValues(t, sum.WrongSteps, promValues(page, "mdap_steps_wrong_total")[""])
	assert.NotContains(t, page, key)
	code, _ = get("/healthz")
	assert.Equal(t, 200, code)
	code, body := get("/readyz")
	assert.Equal(t, 503, code, "the run has ended: not ready through the linger (docs/observe.md): %s", body)
	assert.Contains(t, body, "the run has ended")

	require.NoError(t, c.cmd.Process.Signal(os.Interrupt)) // ends the linger
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "exit 0 after the linger is cut short: %s", c.stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("still lingering after SIGINT")
	}

	spans := otlp.all()
	require.NotEmpty(t, spans, "the spans were exported when the command ended")
	for _, want := range []string{"maker.run", "maker.step", "chat sim", "gen_ai.request.model", "gen_ai.usage.input_tokens", "mdap.step.winner.votes", "maker-test"} {
		assert.True(t, bytes.Contains(spans, []byte(want)), "the trace has %s", want)
	}
	assert.False(t, bytes.Contains(spans, []byte(key)), "no span carries the key")
	errOut := c.stderr.String()
	assert.NotContains(t, errOut, key)
	var logged int
	for _, line := range strings.Split(errOut, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		assert.Regexp(t, `^[0-9a-f]{32}$`, rec["trace_id"], line)
		logged++
	}
	assert.Positive(t, logged, "red flags were logged as JSON: %s", errOut)
}

// commandWithEnv is the binary with args and env added to the test's
// environment.
func commandWithEnv(bin string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// TestUnreachableCollectorNeverFailsARun: docs/observe.md says "An
// unreachable collector drops spans; it never fails a run". With
// OTEL_EXPORTER_OTLP_ENDPOINT at a port nothing listens on, and at one
// that accepts connections and never answers, `maker hanoi` solves and
// exits 0 with its JSON summary, and ends within a minute (the exporter's
// shutdown does not hold the exit).
func TestUnreachableCollectorNeverFailsARun(t *testing.T) {
	t.Parallel()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	go func() { // accept and hold, never answer
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	for _, endpoint := range []string{"http://127.0.0.1:1", "http://" + silent.Addr().String()} {
		began := time.Now()
		cmd := commandWithEnv(binary, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint}, "hanoi", "--disks", "4", "--json", "--progress", "off")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s: maker hanoi did not end; stderr: %s", endpoint, stderr.String())
		}
		assert.NoError(t, err, "%s: exit 0; stderr: %s", endpoint, stderr.String())
		var s hanoiSummary
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &s), "%s: stdout %q", endpoint, stdout.String())
		assert.True(t, s.Solved, endpoint)
		assert.Less(t, time.Since(began), time.Minute, "%s: the exit is not held by the exporter", endpoint)
	}
}
