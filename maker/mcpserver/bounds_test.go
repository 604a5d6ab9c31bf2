package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/httpbound/httpboundtest"
	"github.com/mdap-go/mdap/maker/mcpserver"
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

// TestHTTPSessionFloodIsBounded sends 20,000 initialize requests
// (MDAP_FLOOD_CLIENTS changes the count), each opening a session that is
// then left idle: at most MaxSessions are ever open (the rest get a clear
// 503), goroutines, file descriptors and the heap stay bounded, idle
// sessions time out, and a normal client then connects and calls a tool.
func TestHTTPSessionFloodIsBounded(t *testing.T) {
	n, _ := httpboundtest.Clients()
	const maxSessions = 64
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{MaxSessions: maxSessions, SessionTimeout: time.Second})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: 30 * time.Second}
	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	fds0, g0 := httpboundtest.OpenFDs(), runtime.NumGoroutine()

	var opened, refused atomic.Int64
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 8 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				code, body := post(t, hc, endpoint, initialize, nil)
				switch code {
				case http.StatusOK:
					opened.Add(1)
				case http.StatusServiceUnavailable:
					refused.Add(1)
					assert.Contains(t, body, "at most 64 sessions")
				default:
					t.Errorf("initialize: %d %s", code, body)
				}
			}
		})
	}
	wg.Wait()
	runtime.GC()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	fds, goroutines := httpboundtest.OpenFDs()-fds0, runtime.NumGoroutine()-g0
	t.Logf("%d initialize requests: %d sessions opened, %d refused; then %d more fds, %d more goroutines, heap %+d KiB",
		n, opened.Load(), refused.Load(), fds, goroutines, (int64(m1.HeapInuse)-int64(m0.HeapInuse))/1024)
	assert.Equal(t, int64(n), opened.Load()+refused.Load())
	assert.Positive(t, refused.Load(), "the cap was reached")
	assert.LessOrEqual(t, goroutines, 8*maxSessions+64, "goroutines bounded by the session cap")
	assert.LessOrEqual(t, fds, 64, "file descriptors bounded")
	assert.Less(t, int64(m1.HeapInuse)-int64(m0.HeapInuse), int64(64<<20), "heap bounded")

	// Idle sessions time out; a normal client then connects.
	assert.Eventually(t, func() bool {
		cs, err := httpClient(t, endpoint, &http.Client{})
		if err != nil {
			return false
		}
		res := call(t, context.Background(), cs, "kmin", map[string]any{"steps": 1023, "p": 0.99}, nil)
		return !res.IsError
	}, 20*time.Second, 200*time.Millisecond)
}

// TestHTTPOriginAndBearerScheme: an Origin of another site is refused
// with 403 (the MCP spec's rule), the server's own, a loopback one and a
// listed one are accepted, requests without Origin are not checked; the
// bearer scheme is matched in any case.
func TestHTTPOriginAndBearerScheme(t *testing.T) {
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
