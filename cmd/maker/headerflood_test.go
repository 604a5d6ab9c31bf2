package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/httpbound/httpboundtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headerFloodConns is the size of TestHeaderFloodRSS's floods: 200
// connections by default, MDAP_HEADER_FLOOD for the full 1,000 of #35.
func headerFloodConns() int {
	if v, err := strconv.Atoi(os.Getenv("MDAP_HEADER_FLOOD")); err == nil && v > 0 {
		return v
	}
	return 200
}

// vmRSS is the resident set of process pid, in bytes, from
// /proc/PID/status.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	require.NotNil(t, m)
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// rssPeak samples pid's VmRSS every 2 ms until stop is called, which
// returns the highest.
func rssPeak(t *testing.T, pid int) (stop func() int64) {
	var peak atomic.Int64
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err == nil {
				if m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b); m != nil {
					kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
					if kb<<10 > peak.Load() {
						peak.Store(kb << 10)
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-ended
		return peak.Load()
	}
}

// floodServer is one listener of the real binary under test.
type floodServer struct {
	name   string
	pid    int
	addr   string              // HOST:PORT
	normal func() (int, error) // one normal request: its status
}

// headerFlood opens n connections to addr at once, each sending a
// request line and then, on one header line never finished, line bytes
// (as much as the server reads), and holds them until release is closed.
// It returns once every connection has written what it could; the
// connections are closed when release is.
func headerFlood(t *testing.T, addr string, n, line int, release <-chan struct{}) (written *sync.WaitGroup, closed *sync.WaitGroup) {
	pad := []byte("GET / HTTP/1.1\r\nHost: flood\r\nX-Pad: " + strings.Repeat("a", line))
	written, closed = &sync.WaitGroup{}, &sync.WaitGroup{}
	for range n {
		written.Add(1)
		closed.Go(func() {
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				written.Done()
				return
			}
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, _ = c.Write(pad) // cut by the server (431) or the deadline
			written.Done()
			<-release
			_ = c.Close()
		})
	}
	return written, closed
}

// TestHeaderFloodRSS runs the real binary and floods each HTTP listener
// mdap serves (serve-sim, serve-sim's --metrics-addr, maker mcp --http)
// with connections that send an unfinished header line: 1 MiB (cut at
// 16 KiB, answered 431) and, separately, 15 KiB held open (just under the
// bound, kept until the flood ends). The server's VmRSS grows by at most
// 64 MB, and a normal request answers during and after. 200 connections by
// default; MDAP_HEADER_FLOOD=1000 for the full size of #35.
func TestHeaderFloodRSS(t *testing.T) {
	t.Parallel()
	n := headerFloodConns()
	httpboundtest.Clients() // raises this process's descriptor limit, which the children inherit
	var servers []floodServer

	sim := exec.Command(binary, "serve-sim", "--addr", "127.0.0.1:0")
	simAddr := startListening(t, sim, regexp.MustCompile(`listening on http://(127\.0\.0\.1:\d+)/v1`), true)
	servers = append(servers, floodServer{"serve-sim", sim.Process.Pid, simAddr, func() (int, error) { return get("http://"+simAddr+"/v1/models", "") }})

	met := exec.Command(binary, "serve-sim", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	metAddr := startListening(t, met, regexp.MustCompile(`metrics at http://(127\.0\.0\.1:\d+)/metrics`), false)
	servers = append(servers, floodServer{"--metrics-addr", met.Process.Pid, metAddr, func() (int, error) { return get("http://"+metAddr+"/healthz", "") }})

	mcpCmd := exec.Command(binary, "mcp", "--http", "127.0.0.1:0", "--state", t.TempDir(), "--log-level", "warn")
	mcpCmd.Env = append(os.Environ(), tokenEnv+"=flood-token")
	mcpAddr := startListening(t, mcpCmd, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp`), true)
	servers = append(servers, floodServer{"mcp --http", mcpCmd.Process.Pid, mcpAddr, func() (int, error) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+mcpAddr+"/mcp", strings.NewReader(mcpInitialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer flood-token")
		return do(req)
	}})

	// answers: a normal request gets 200, retried while a connection cap
	// (the metrics endpoint keeps 32) refuses it 503.
	answers := func(s floodServer) bool {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			code, err := s.normal()
			if err == nil && code == http.StatusOK {
				return true
			}
			time.Sleep(20 * time.Millisecond)
		}
		return false
	}
	// Each server is a process of its own, its RSS its own: the three
	// are flooded at once (in a group, so that this test's time is
	// theirs).
	t.Run("servers", func(t *testing.T) {
		for _, s := range servers {
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				first := vmRSS(t, s.pid)
				for _, tc := range []struct {
					what string
					line int
				}{{"1 MiB unfinished header line", 1 << 20}, {"15 KiB unfinished header line, held", 15 << 10}} {
					require.True(t, answers(s), "%s answers before the flood", s.name)
					base := vmRSS(t, s.pid)
					stop := rssPeak(t, s.pid)
					release := make(chan struct{})
					written, closed := headerFlood(t, s.addr, n, tc.line, release)
					written.Wait()
					during := answers(s)
					close(release)
					closed.Wait()
					time.Sleep(500 * time.Millisecond)
					peak := stop() // through the closing of the flood's connections
					after := vmRSS(t, s.pid)
					t.Logf("%s, %d × %s: VmRSS %d MB before, peak %d MB (+%d MB), %d MB after (+%d MB since the first flood began); a normal request answered during: %v",
						s.name, n, tc.what, base>>20, peak>>20, (peak-base)>>20, after>>20, (after-first)>>20, during)
					assert.LessOrEqual(t, max(peak, after)-base, int64(64<<20), "%s, %s: RSS growth at most 64 MB", s.name, tc.what)
					assert.True(t, during, "%s: a normal request answers during the flood", s.name)
					assert.True(t, answers(s), "%s: a normal request answers after the flood", s.name)
				}
			})
		}
	})
}

// startListening starts cmd and returns the HOST:PORT that re finds on
// its stdout (onStdout) or stderr; the process is killed at cleanup.
func startListening(t *testing.T, cmd *exec.Cmd, re *regexp.Regexp, onStdout bool) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	watched, other := io.Reader(stdout), io.Reader(stderr)
	if !onStdout {
		watched, other = stderr, stdout
	}
	go func() { _, _ = io.Copy(io.Discard, other) }()
	br := bufio.NewReader(watched)
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err, "%v: no address printed", cmd.Args)
		if m := re.FindStringSubmatch(line); m != nil {
			go func() { _, _ = io.Copy(io.Discard, br) }()
			return m[1]
		}
	}
}

func get(url, token string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	return do(req)
}

func do(req *http.Request) (int, error) {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
