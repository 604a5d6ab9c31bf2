package httpbound

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCaps: past MaxConns a connection is answered 503 and closed; past
// MaxInFlight a request is answered 503; a slow body is cut by the read
// timeout, which frees its connection for a normal request. Each step
// waits for what it needs (a request in the handler, connections open),
// never for a time a loaded machine could stretch.
func TestCaps(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			close(entered)
			<-release
		}
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	})
	lim := Limits{MaxConns: 3, MaxInFlight: 1, ReadTimeout: 300 * time.Millisecond}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := lim.Listener(raw)
	srv := lim.Server(h)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	addr := raw.Addr().String()
	cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

	// One request holds the only slot: the next gets 503.
	go func() { _, _ = cl.Get("http://" + addr + "/block") }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking request never reached the handler")
	}
	resp, err := cl.Get("http://" + addr + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "at most 1 requests at once")
	close(release)

	// Idle kept-alive connections fill the connections (the idle
	// timeout, 2 minutes, keeps them; slow bodies would be cut by the
	// read timeout, on a loaded machine before the next connection):
	// the next connection is refused.
	require.Eventually(t, func() bool { return ln.Open() == 0 }, 5*time.Second, time.Millisecond)
	var idle []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		idle = append(idle, c)
	}
	require.Equal(t, 3, ln.Open())
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(line, "HTTP/1.1 503"), line)
	c.Close()
	assert.Equal(t, uint64(1), ln.Refused())
	for _, c := range idle {
		c.Close()
	}

	// Slow bodies fill the connections; the read timeout cuts them (the
	// server closes each), which frees their connections: a normal
	// request answers.
	require.Eventually(t, func() bool { return ln.Open() == 0 }, 5*time.Second, time.Millisecond)
	var slow []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab")
		require.NoError(t, err)
		slow = append(slow, c)
	}
	for _, c := range slow {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, c)
		require.NoError(t, err, "the server closed the slow body's connection")
		c.Close()
	}
	require.Eventually(t, func() bool { return ln.Open() == 0 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, uint64(1), ln.Refused(), "the slow bodies were let in, then cut")
	resp, err = cl.Get("http://" + addr + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestHeaderBound: a request whose headers pass 16 KiB (one endless
// header line, never finished) is answered 431 once the bound is read,
// and its connection closed, instead of being read up to net/http's 1 MiB
// default; headers of 12 KiB are served.
func TestHeaderBound(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	lim := Limits{}
	srv := lim.Server(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	assert.Equal(t, DefaultMaxHeaderBytes, srv.MaxHeaderBytes)
	go func() { _ = srv.Serve(lim.Listener(raw)) }()
	defer srv.Close()
	addr := raw.Addr().String()

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	// 64 KiB of one header line with no end: more than the bound plus
	// net/http's slack, far less than its default.
	go func() { _, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Long: "+strings.Repeat("a", 64<<10)) }()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err, "the server answers before the header line ends")
	assert.Contains(t, line, "431")

	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	require.NoError(t, err)
	req.Header.Set("X-Fits", strings.Repeat("b", 12<<10))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
