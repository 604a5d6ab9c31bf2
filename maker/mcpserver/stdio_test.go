package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type nopWC struct{ io.Writer }

func (nopWC) Close() error { return nil }

// TestStdioMalformedLineKeepsServing: over stdio, a line that is not JSON
// is answered with a JSON-RPC -32700 error, a JSON line that is not a
// message with -32600 (with its id), and the session goes on serving.
func TestStdioMalformedLineKeepsServing(t *testing.T) {
	srv, err := mcpserver.New(mcpserver.Config{})
	require.NoError(t, err)
	defer srv.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err := srv.ServeIO(ctx, inR, nopWC{outW})
		outW.Close() // a session that ended fails the next read
		done <- err
	}()
	lines := bufio.NewScanner(outR)
	next := func() map[string]any {
		require.True(t, lines.Scan(), "a reply")
		var m map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m), lines.Text())
		return m
	}
	send := func(s string) {
		_, err := io.WriteString(inW, s+"\n")
		require.NoError(t, err)
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		require.NotNil(t, e, "an error reply: %v", m)
		return e["code"].(float64)
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	assert.NotNil(t, next()["result"])
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`this is not json`)
	m := next()
	assert.Equal(t, float64(-32700), code(m))
	assert.Nil(t, m["id"])
	send(`{"id": 7, "hello": "world"}`)
	m = next()
	assert.Equal(t, float64(-32600), code(m))
	assert.Equal(t, float64(7), m["id"])
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	m = next()
	assert.Equal(t, float64(2), m["id"])
	assert.NotNil(t, m["result"], "the session still serves")
	inW.Close()
	require.NoError(t, <-done)
}

// TestStdioOverlongLineKeepsServing: over stdio, a line longer than
// MaxRequestBytes (here 4 MiB against a 1 KiB bound) is answered with a
// JSON-RPC -32600 error naming the bound, and the next request is
// answered: the session goes on.
func TestStdioOverlongLineKeepsServing(t *testing.T) {
	srv, err := mcpserver.New(mcpserver.Config{MaxRequestBytes: 1024})
	require.NoError(t, err)
	defer srv.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err := srv.ServeIO(ctx, inR, nopWC{outW})
		outW.Close()
		done <- err
	}()
	lines := bufio.NewScanner(outR)
	next := func() map[string]any {
		require.True(t, lines.Scan(), "a reply")
		var m map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m), lines.Text())
		return m
	}
	send := func(s string) {
		_, err := io.WriteString(inW, s+"\n")
		require.NoError(t, err)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	assert.NotNil(t, next()["result"])
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"parse","arguments":{"reply":"` + strings.Repeat("x", 4<<20) + `"}}}`)
	m := next()
	e, _ := m["error"].(map[string]any)
	require.NotNil(t, e, "an error reply: %v", m)
	assert.Equal(t, float64(-32600), e["code"])
	assert.Contains(t, e["message"], "1024 bytes (--max-request-bytes)")
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	m = next()
	assert.Equal(t, float64(3), m["id"])
	assert.NotNil(t, m["result"], "the session still serves")
	inW.Close()
	require.NoError(t, <-done)
}
