package simserver_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/httpbound/httpboundtest"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlowConnectionFloodIsBounded opens 20,000 connections that send a
// request's headers and a few bytes of a longer body, and keep them open
// (MDAP_FLOOD_CLIENTS changes the count; it is lowered to what the file
// descriptor limit allows). The server keeps at most MaxConns of them
// (the rest are answered 503 and closed at once), its file descriptors,
// goroutines and heap stay bounded, the read timeout cuts the slow
// bodies, and a normal request then answers.
func TestSlowConnectionFloodIsBounded(t *testing.T) {
	n, limit := httpboundtest.Clients()
	t.Logf("%d slow clients (file descriptor limit %d)", n, limit)
	const maxConns = 128
	cfg := hanoiConfig(sim.DefaultConfig())
	cfg.Bounds = simserver.Bounds{MaxConns: maxConns, ReadTimeout: time.Second, ReadHeaderTimeout: time.Second}
	s, err := simserver.New(cfg)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()
	addr := ln.Addr().String()
	cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	ok := func() bool {
		resp, err := cl.Get("http://" + addr + "/v1/models")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	require.True(t, ok())

	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	fds0, g0 := httpboundtest.OpenFDs(), runtime.NumGoroutine()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	head := "POST /v1/chat/completions HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"model\":"
	for range n {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = io.WriteString(c, head) // a refused connection may be closed already
		conns = append(conns, c)
	}
	runtime.GC()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	serverFDs := httpboundtest.OpenFDs() - fds0 - n
	goroutines := runtime.NumGoroutine() - g0
	t.Logf("server side after the flood: %d file descriptors, %d goroutines, heap %+d KiB", serverFDs, goroutines, (int64(m1.HeapInuse)-int64(m0.HeapInuse))/1024)
	assert.LessOrEqual(t, serverFDs, maxConns+32, "file descriptors bounded by MaxConns")
	assert.LessOrEqual(t, goroutines, 2*maxConns+32, "goroutines bounded by MaxConns")
	assert.Less(t, int64(m1.HeapInuse)-int64(m0.HeapInuse), int64(64<<20), "heap bounded")

	// The connections past MaxConns were refused with a clear 503. On a
	// loaded machine the flood outlasts the read timeout, which frees
	// slots that later connections take (they are then cut with a 400):
	// so of the last connections, each is refused or cut, at most
	// MaxConns are cut, and some are refused.
	last := conns[len(conns)-min(len(conns), 64):]
	statuses := make([]string, len(last))
	var wg sync.WaitGroup
	for i, c := range last {
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				line = err.Error()
			}
			statuses[i] = line
		})
	}
	wg.Wait()
	refused, cut := 0, 0
	for _, line := range statuses {
		switch {
		case strings.HasPrefix(line, "HTTP/1.1 503"):
			refused++
		case strings.HasPrefix(line, "HTTP/1.1 400"):
			cut++
		default:
			t.Errorf("a connection of the flood got %q, not a 503 (refused) or a 400 (its slow body cut)", line)
		}
	}
	t.Logf("the last %d connections: %d refused, %d cut by the read timeout", len(last), refused, cut)
	assert.Positive(t, refused, "connections past MaxConns are refused with a 503")
	assert.LessOrEqual(t, cut, maxConns)

	// Once the read timeout cut the slow bodies, a normal request answers.
	assert.Eventually(t, ok, 15*time.Second, 100*time.Millisecond, "a normal request answers")
}
