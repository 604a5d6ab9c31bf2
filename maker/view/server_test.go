package view_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/view"
)

func get(t *testing.T, c *http.Client, url string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// With a token, nothing is served without it; the page's ?token= becomes
// a cookie only this origin gets, and leaves the address at once.
func TestTokenGuardsEverything(t *testing.T) {
	t.Parallel()
	token := view.NewToken()
	h, err := view.Handler(view.Config{Run: view.NewRun(view.Info{}), Token: token})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	for _, p := range []string{"/", "/state", "/cells", "/events", "/step/0", "/map.png", "/app.js"} {
		assert.Equal(t, http.StatusUnauthorized, get(t, noRedirect, srv.URL+p).StatusCode, p)
		assert.Equal(t, http.StatusUnauthorized, get(t, noRedirect, srv.URL+p, "Authorization", "Bearer "+token[:len(token)-1]+"x").StatusCode, p)
	}
	assert.Equal(t, http.StatusOK, get(t, noRedirect, srv.URL+"/state", "Authorization", "Bearer "+token).StatusCode)
	assert.Equal(t, http.StatusUnauthorized, get(t, noRedirect, srv.URL+"/state?token="+token).StatusCode, "only the page takes the token in its address")

	resp := get(t, noRedirect, srv.URL+"/?token="+token)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/", resp.Header.Get("Location"), "the token leaves the address")
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	c := cookies[0]
	assert.Equal(t, token, c.Value)
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	assert.Equal(t, http.StatusOK, get(t, noRedirect, srv.URL+"/state", "Cookie", c.Name+"="+c.Value).StatusCode)
	assert.Equal(t, http.StatusUnauthorized, get(t, noRedirect, srv.URL+"/state", "Cookie", c.Name+"=x"+c.Value[1:]).StatusCode)
}

// Without a token only loopback names are served: a page elsewhere that
// rebinds its name to 127.0.0.1 gets nothing.
func TestWithoutATokenOnlyLoopbackHosts(t *testing.T) {
	t.Parallel()
	h, err := view.Handler(view.Config{Run: view.NewRun(view.Info{})})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for host, want := range map[string]int{
		"127.0.0.1:80": http.StatusOK, "localhost:1": http.StatusOK, "[::1]:8080": http.StatusOK, "127.0.0.1": http.StatusOK,
		"evil.example:80": http.StatusForbidden, "evil.example": http.StatusForbidden, "10.0.0.1:80": http.StatusForbidden, "localhost.evil.example": http.StatusForbidden,
	} {
		assert.Equal(t, want, get(t, http.DefaultClient, srv.URL+"/state", "Host", host).StatusCode, host)
	}
}

// The view changes nothing: every method but GET and HEAD is refused.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	h, err := view.Handler(view.Config{Run: view.NewRun(view.Info{})})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		req, err := http.NewRequest(m, srv.URL+"/state", strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
		assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
	}
	resp, err := http.Head(srv.URL + "/state")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
}

// At most MaxStreams event streams at once; the next is refused, not
// queued, and a freed slot serves again.
func TestEventStreamsAreCapped(t *testing.T) {
	t.Parallel()
	h, err := view.Handler(view.Config{Run: view.NewRun(view.Info{})})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	var open []*http.Response
	for range view.MaxStreams {
		resp, err := http.Get(srv.URL + "/events")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		open = append(open, resp)
	}
	resp, err := http.Get(srv.URL + "/events")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	open[0].Body.Close()
	assert.Eventually(t, func() bool {
		resp, err := http.Get(srv.URL + "/events")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 5e9, 1e7)
	for _, r := range open[1:] {
		r.Body.Close()
	}
}

func TestLoopbackAddresses(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{"127.0.0.1:0": true, ":0": true, "localhost:8080": true, "[::1]:0": true, "0.0.0.0:0": false, "[::]:0": false, "example.com:80": false, "10.1.2.3:0": false} {
		got, err := view.Loopback(addr)
		require.NoError(t, err, addr)
		assert.Equal(t, want, got, addr)
	}
	for _, bad := range []string{"", "8080", "host:port", "127.0.0.1:70000"} {
		_, err := view.Loopback(bad)
		assert.ErrorIs(t, err, view.ErrAddr, bad)
	}
}

// A listener serves within Bounds: its header cap answers 431.
func TestServeBoundsHeaders(t *testing.T) {
	t.Parallel()
	ln, err := view.Listen("127.0.0.1:0")
	require.NoError(t, err)
	h, err := view.Handler(view.Config{Run: view.NewRun(view.Info{})})
	require.NoError(t, err)
	s := view.Serve(ln, h)
	defer s.Close()
	resp := get(t, http.DefaultClient, "http://"+s.Addr()+"/state", "X-Big", strings.Repeat("a", 20<<10))
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	assert.Equal(t, http.StatusOK, get(t, http.DefaultClient, "http://"+s.Addr()+"/state").StatusCode)
	// docs/view.md: "at most 32 connections and 16 requests in flight, at most 8 event streams".
	assert.Equal(t, 32, view.Bounds.MaxConns)
	assert.Equal(t, 16, view.Bounds.MaxInFlight)
	assert.Equal(t, 8, view.MaxStreams)
}

// Close ends the event streams at once (they never go idle by
// themselves).
func TestCloseEndsEventStreams(t *testing.T) {
	ln, err := view.Listen("127.0.0.1:0")
	require.NoError(t, err)
	h, err := view.Handler(view.Config{Run: view.NewRun(view.Info{})})
	require.NoError(t, err)
	s := view.Serve(ln, h)
	resp, err := http.Get("http://" + s.Addr() + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	start := time.Now()
	require.NoError(t, s.Close())
	assert.Less(t, time.Since(start), 900*time.Millisecond, "not cut by Close's one-second grace")
	_, err = io.ReadAll(resp.Body)
	assert.NoError(t, err, "the stream ended cleanly")
}
