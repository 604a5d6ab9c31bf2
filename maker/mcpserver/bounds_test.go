package mcpserver_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/httpbound/httpboundtest"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`

func post(t *testing.T, hc *http.Client, endpoint, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTPSessionFloodLocksNobodyOut: one client (127.0.0.1) sends 300
// initialize requests (MDAP_SESSION_FLOOD=1000 for the size of #35) and
// leaves each session unused, as the attack of #35 did: it cycles
// through its own 8 sessions (each initialize is answered 200, or 503 when
// its 8 concurrent requests hold every place of its own), a client on
// the same address that uses its session keeps it, clients on other
// addresses keep theirs and new ones get one during and after the flood;
// goroutines, file descriptors and the heap stay bounded.
func TestHTTPSessionFloodLocksNobodyOut(t *testing.T) {
	n := 300
	if v, err := strconv.Atoi(os.Getenv("MDAP_SESSION_FLOOD")); err == nil && v > 0 {
		n = v
	}
	const maxSessions, perClient = 32, 8
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{NoAuth: true, MaxSessions: maxSessions, MaxSessionsPerClient: perClient})
	ctx := context.Background()
	kmin := func(cs *mcp.ClientSession) {
		t.Helper()
		res := call(t, ctx, cs, "kmin", map[string]any{"steps": 1023, "p": 0.99}, nil)
		require.False(t, res.IsError)
	}
	same, err := httpClient(t, endpoint, fromAddr("127.0.0.1"))
	require.NoError(t, err)
	kmin(same)
	other, err := httpClient(t, endpoint, fromAddr("127.0.0.2"))
	require.NoError(t, err)
	kmin(other)

	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	fds0, g0 := httpboundtest.OpenFDs(), runtime.NumGoroutine()
	flooder := fromAddr("127.0.0.1")
	var opened, refused atomic.Int64
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 8 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				code, body := post(t, flooder, endpoint, initialize, nil)
				switch code {
				case http.StatusOK:
					opened.Add(1)
				case http.StatusServiceUnavailable:
					refused.Add(1)
					assert.Contains(t, body, "at most 8 sessions per client")
				default:
					t.Errorf("initialize: %d %s", code, body)
				}
			}
		})
	}
	// A new client, during the flood.
	for next.Load() < int64(n/4) {
		time.Sleep(time.Millisecond)
	}
	during, err := httpClient(t, endpoint, fromAddr("127.0.0.3"))
	require.NoError(t, err, "a new client gets a session during the flood")
	kmin(during)
	wg.Wait()
	flooder.CloseIdleConnections()
	runtime.GC()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	fds, goroutines := httpboundtest.OpenFDs()-fds0, runtime.NumGoroutine()-g0
	t.Logf("%d initialize requests from one address: %d answered 200, %d refused; then %d more fds, %d more goroutines, heap %+d KiB",
		n, opened.Load(), refused.Load(), fds, goroutines, (int64(m1.HeapInuse)-int64(m0.HeapInuse))/1024)
	assert.Equal(t, int64(n), opened.Load()+refused.Load())
	assert.Greater(t, opened.Load(), int64(n/2), "most are answered: the flooder's idle sessions give way to its new ones")
	assert.LessOrEqual(t, goroutines, 8*maxSessions+64, "goroutines bounded by the session cap")
	assert.LessOrEqual(t, fds, 64, "file descriptors bounded")
	assert.Less(t, int64(m1.HeapInuse)-int64(m0.HeapInuse), int64(64<<20), "heap bounded")

	// The sessions in use were kept; a new client gets one after it.
	kmin(same)
	kmin(other)
	kmin(during)
	after, err := httpClient(t, endpoint, fromAddr("127.0.0.4"))
	require.NoError(t, err)
	kmin(after)
}

// fromAddr is an HTTP client whose connections come from ip (any
// 127.0.0.0/8 address reaches a server on 127.0.0.1 on Linux), so that a
// test can stand for several clients.
func fromAddr(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 8}, Timeout: 30 * time.Second}
}

// TestHTTPOriginAndBearerScheme: an Origin of another site is refused
// with 403 (the MCP spec's rule), the server's own, a loopback one and a
// listed one are accepted, requests without Origin are not checked; the
// bearer scheme is matched in any case.
func TestHTTPOriginAndBearerScheme(t *testing.T) {
	t.Parallel()
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{Token: "s3cret", AllowedOrigins: []string{"https://app.example"}})
	host := strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), mcpserver.Path)
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	with := func(k, v string) map[string]string { return map[string]string{"Authorization": "Bearer s3cret", k: v} }
	hc := &http.Client{}
	for origin, want := range map[string]int{
		"https://evil.example":    http.StatusForbidden,
		"null":                    http.StatusForbidden,
		"http://" + host:          http.StatusOK,
		"http://localhost:3000":   http.StatusOK,
		"https://app.example":     http.StatusOK,
		"http://127.0.0.1.nip.io": http.StatusForbidden,
	} {
		code, body := post(t, hc, endpoint, initialize, with("Origin", origin))
		assert.Equal(t, want, code, "Origin %s: %s", origin, body)
		if want == http.StatusForbidden {
			assert.Contains(t, body, "Origin")
		}
	}
	code, _ := post(t, hc, endpoint, initialize, auth)
	assert.Equal(t, http.StatusOK, code, "no Origin: not a browser, not checked")
	for _, h := range []string{"bearer s3cret", "BEARER s3cret", "Bearer  s3cret"} {
		code, body := post(t, hc, endpoint, initialize, map[string]string{"Authorization": h})
		assert.Equal(t, http.StatusOK, code, "%q: %s", h, body)
	}
	for _, h := range []string{"Basic s3cret", "bearer s3cre", "s3cret", "Bearers3cret"} {
		code, _ := post(t, hc, endpoint, initialize, map[string]string{"Authorization": h})
		assert.Equal(t, http.StatusUnauthorized, code, "%q", h)
	}
}
