package mcpserver_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
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
