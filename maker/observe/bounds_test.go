package observe

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documented bounds (docs/observe.md): a change to Bounds must change
// the docs and these.
const (
	documentedMaxConns    = 32
	documentedMaxInFlight = 8
)

// TestMetricsEndpointCapsConnections: past documentedMaxConns open
// connections a client is answered 503 and closed, and a place freed is
// served again.
func TestMetricsEndpointCapsConnections(t *testing.T) {
	srv, err := Serve("127.0.0.1:0", Handler(nil))
	require.NoError(t, err)
	defer srv.Close()

	conns := make([]net.Conn, 0, documentedMaxConns)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range documentedMaxConns {
		c, err := net.Dial("tcp", srv.Addr())
		require.NoError(t, err)
		conns = append(conns, c)
	}
	require.Eventually(t, func() bool { return srv.Listener().Open() == documentedMaxConns }, 10*time.Second, 5*time.Millisecond)

	extra, err := net.Dial("tcp", srv.Addr())
	require.NoError(t, err)
	defer extra.Close()
	_ = extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(extra), nil)
	require.NoError(t, err, "the connection past the cap must be answered, not left waiting")
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "at most 32 connections")
	assert.Equal(t, uint64(1), srv.Listener().Refused())

	// An open connection still works, and a freed place takes a new one.
	_, err = io.WriteString(conns[0], "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	_ = conns[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err = http.ReadResponse(bufio.NewReader(conns[0]), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	_ = conns[1].Close()
	require.Eventually(t, func() bool { return srv.Listener().Open() < documentedMaxConns }, 10*time.Second, 5*time.Millisecond)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	r, err := c.Get("http://" + srv.Addr() + "/healthz")
	require.NoError(t, err)
	_ = r.Body.Close()
	assert.Equal(t, http.StatusOK, r.StatusCode)
}

// TestMetricsEndpointCapsRequestsInFlight: at most documentedMaxInFlight
// requests are handled at once (each /readyz runs every probe); one past
// it is refused with a 503 and Retry-After at once, not queued.
func TestMetricsEndpointCapsRequestsInFlight(t *testing.T) {
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(documentedMaxInFlight)
	probe := Probe{Name: "slow", Check: func(ctx context.Context) error {
		entered.Done()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}}
	srv, err := Serve("127.0.0.1:0", Handler(nil, probe))
	require.NoError(t, err)
	defer srv.Close()

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, DisableKeepAlives: true}}
	var done sync.WaitGroup
	codes := make(chan int, documentedMaxInFlight)
	for range documentedMaxInFlight {
		done.Go(func() {
			r, err := client.Get("http://" + srv.Addr() + "/readyz")
			if err != nil {
				codes <- -1
				return
			}
			_ = r.Body.Close()
			codes <- r.StatusCode
		})
	}
	entered.Wait() // every slot is held by a waiting probe

	r, err := client.Get("http://" + srv.Addr() + "/healthz")
	require.NoError(t, err)
	body, _ := io.ReadAll(r.Body)
	_ = r.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, r.StatusCode)
	assert.Equal(t, "1", r.Header.Get("Retry-After"))
	assert.Contains(t, string(body), "at most 8 requests at once")

	close(release)
	done.Wait()
	close(codes)
	for code := range codes {
		assert.Equal(t, http.StatusOK, code)
	}
}

// TestMetricsEndpointBoundsHeaders: a request's headers are cut at 16 KiB
// (plus the slack net/http allows), answered 431.
func TestMetricsEndpointBoundsHeaders(t *testing.T) {
	srv, err := Serve("127.0.0.1:0", Handler(nil))
	require.NoError(t, err)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, "http://"+srv.Addr()+"/healthz", nil)
	require.NoError(t, err)
	req.Header.Set("X-Big", strings.Repeat("a", 64<<10))
	r, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = r.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, r.StatusCode)
}
