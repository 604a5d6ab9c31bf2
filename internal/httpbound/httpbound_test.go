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
// timeout, which frees its connection for a normal request.
func TestCaps(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
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
	require.Eventually(t, func() bool { return ln.Open() == 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // in the handler
	resp, err := cl.Get("http://" + addr + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "at most 1 requests at once")
	close(release)

	// Slow bodies fill the connections; the next connection is refused.
	require.Eventually(t, func() bool { return ln.Open() == 0 }, 5*time.Second, time.Millisecond)
	var slow []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab")
		require.NoError(t, err)
		slow = append(slow, c)
	}
	require.Eventually(t, func() bool { return ln.Open() == 3 }, 5*time.Second, time.Millisecond)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(line, "HTTP/1.1 503"), line)
	c.Close()
	assert.Equal(t, uint64(1), ln.Refused())

	// The read timeout cuts the slow bodies; a normal request answers.
	require.Eventually(t, func() bool { return ln.Open() == 0 }, 5*time.Second, 10*time.Millisecond)
	for _, c := range slow {
		c.Close()
	}
	resp, err = cl.Get("http://" + addr + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
