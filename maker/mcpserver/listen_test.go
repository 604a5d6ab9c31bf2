package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ListenHTTP never leaves the endpoint open by default: without a token
// it generates one, which the endpoint then requires; a token given is
// kept, NoAuth keeps none.
func TestListenHTTPGuardsByDefault(t *testing.T) {
	t.Parallel()
	l, err := mcpserver.ListenHTTP(":0", false, mcpserver.HTTPOptions{})
	require.NoError(t, err)
	require.True(t, l.Generated)
	require.Len(t, l.Options.Token, 64, "256 bits in hex")
	assert.True(t, strings.HasPrefix(l.Addr().String(), "127.0.0.1:"), "an empty host is loopback")
	srv, err := mcpserver.New(mcpserver.Config{})
	require.NoError(t, err)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTPOn(ctx, l, l.Options) }()
	url := "http://" + l.Addr().String() + mcpserver.Path
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the generated token is required")
	cancel()
	require.NoError(t, <-done)

	l, err = mcpserver.ListenHTTP("127.0.0.1:0", false, mcpserver.HTTPOptions{Token: "given"})
	require.NoError(t, err)
	assert.False(t, l.Generated)
	assert.Equal(t, "given", l.Options.Token)
	require.NoError(t, l.Close())

	l, err = mcpserver.ListenHTTP("127.0.0.1:0", false, mcpserver.HTTPOptions{NoAuth: true})
	require.NoError(t, err)
	assert.False(t, l.Generated)
	assert.Empty(t, l.Options.Token)
	require.NoError(t, l.Close())
}

// ListenHTTP refuses a non-loopback address unless allowed, and says a
// taken port is one.
func TestListenHTTPRefusals(t *testing.T) {
	t.Parallel()
	_, err := mcpserver.ListenHTTP("0.0.0.0:0", false, mcpserver.HTTPOptions{})
	assert.ErrorIs(t, err, mcpserver.ErrListenAddr)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	_, err = mcpserver.ListenHTTP(taken.Addr().String(), false, mcpserver.HTTPOptions{})
	assert.ErrorIs(t, err, mcpserver.ErrListen)
	assert.False(t, errors.Is(err, mcpserver.ErrListenAddr))
}

// ServeStdio serves a session over a plain reader and writer, and ends
// when the reader does.
func TestServeStdio(t *testing.T) {
	t.Parallel()
	srv, err := mcpserver.New(mcpserver.Config{})
	require.NoError(t, err)
	defer srv.Close()
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, srv.ServeStdio(ctx, in, &out), "the client hung up: the normal end")
	assert.Contains(t, out.String(), `"id":1`)
	assert.Contains(t, out.String(), `"result"`)
}

// HTTPConfig refuses the HTTP settings over stdio and NoAuth with a
// token, naming the fields and never the token; stdio listens on nothing.
func TestHTTPConfigListen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    mcpserver.HTTPConfig
		want string
	}{
		{mcpserver.HTTPConfig{HTTPOptions: mcpserver.HTTPOptions{Token: "secret"}}, "Token = <nil>: applies to Addr only"},
		{mcpserver.HTTPConfig{AllowRemote: true}, "AllowRemote = <nil>: applies to Addr only"},
		{mcpserver.HTTPConfig{HTTPOptions: mcpserver.HTTPOptions{NoAuth: true}}, "NoAuth = <nil>: applies to Addr only"},
		{mcpserver.HTTPConfig{Addr: "127.0.0.1:0", HTTPOptions: mcpserver.HTTPOptions{NoAuth: true, Token: "secret"}}, "NoAuth = <nil> plus Token = <nil>: contradict each other"},
	} {
		_, err := tc.c.Listen()
		require.ErrorIs(t, err, mcpserver.ErrConfig, "%+v", tc.c)
		assert.EqualError(t, tc.c.Validate(), err.Error(), "Listen refuses what Validate does")
		assert.ErrorContains(t, err, tc.want)
		assert.NotContains(t, err.Error(), "secret")
	}
	assert.NoError(t, mcpserver.HTTPConfig{}.Validate())
	l, err := mcpserver.HTTPConfig{}.Listen()
	assert.NoError(t, err)
	assert.Nil(t, l, "stdio")
	l, err = mcpserver.HTTPConfig{Addr: "127.0.0.1:0", HTTPOptions: mcpserver.HTTPOptions{NoAuth: true}}.Listen()
	require.NoError(t, err)
	require.NoError(t, l.Close())
}

// Serve logs where and how it serves, and warns when no token guards it.
func TestServeLogsHowItIsReached(t *testing.T) {
	t.Parallel()
	log := &lockedLog{}
	srv, err := mcpserver.New(mcpserver.Config{Logger: slog.New(slog.NewTextHandler(log, nil))})
	require.NoError(t, err)
	defer srv.Close()
	require.NoError(t, srv.Serve(context.Background(), nil, strings.NewReader(""), io.Discard), "stdin at its end: the client left")
	assert.Contains(t, log.String(), `msg="serving MCP over stdio" models=sim root=. state="" tools=`)

	for _, tc := range []struct {
		c    mcpserver.HTTPConfig
		want string
	}{
		{mcpserver.HTTPConfig{Addr: "127.0.0.1:0"}, `auth="bearer token (generated)"`},
		{mcpserver.HTTPConfig{Addr: "127.0.0.1:0", HTTPOptions: mcpserver.HTTPOptions{Token: "given"}}, `auth="bearer token" models=sim`},
		{mcpserver.HTTPConfig{Addr: "127.0.0.1:0", HTTPOptions: mcpserver.HTTPOptions{NoAuth: true}}, "auth=none"},
	} {
		log.Reset()
		l, err := tc.c.Listen()
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, l, nil, nil) }()
		require.Eventually(t, func() bool { return strings.Contains(log.String(), "serving MCP over streamable HTTP") }, 10*time.Second, time.Millisecond)
		cancel()
		require.NoError(t, <-done)
		assert.Contains(t, log.String(), tc.want)
		assert.Equal(t, tc.c.NoAuth, strings.Contains(log.String(), "level=WARN msg=\"serving without a token: every user and process of this machine can use this server"), "%+v", tc.c)
	}
}

// lockedLog is a log read while it is written.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedLog) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }
func (l *lockedLog) Reset()         { l.mu.Lock(); defer l.mu.Unlock(); l.b.Reset() }

// TestServeNoAuthWarningSaysWhoCanUseIt: the warning of a server without
// a token says who can then use it and spend its model keys, as maker
// mcp's --no-auth help and docs/mcp.md ("a warning says who can then use
// the server") promise: on loopback, every user and process of this
// machine, not merely "every client that reaches 127.0.0.1:PORT", which
// reads as the operator's own client.
func TestServeNoAuthWarningSaysWhoCanUseIt(t *testing.T) {
	t.Parallel()
	for addr, who := range map[string]string{
		"127.0.0.1:0": "every user and process of this machine",
		"0.0.0.0:0":   "anyone who can reach ",
	} {
		log := &lockedLog{}
		srv, err := mcpserver.New(mcpserver.Config{Logger: slog.New(slog.NewTextHandler(log, nil))})
		require.NoError(t, err)
		l, err := mcpserver.HTTPConfig{Addr: addr, AllowRemote: true, HTTPOptions: mcpserver.HTTPOptions{NoAuth: true}}.Listen()
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, l, nil, nil) }()
		require.Eventually(t, func() bool { return strings.Contains(log.String(), "serving MCP over streamable HTTP") }, 10*time.Second, time.Millisecond)
		cancel()
		require.NoError(t, <-done)
		srv.Close()
		assert.Contains(t, log.String(), who, addr)
	}
}
