package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type nopWC struct{ io.Writer }

func (nopWC) Close() error { return nil }

// TestStdioMalformedLineKeepsServing: over stdio, a line that is not JSON
// is answered with a JSON-RPC -32700 error, a JSON line that is not a
// message with -32600 (with its id), and the session goes on serving.
func TestStdioMalformedLineKeepsServing(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// TestStdioAnswersWhatItReadBeforeEndOfInput: a client that writes its
// requests and closes its end (`printf ... | maker mcp`) gets an answer to
// every call read before the end of input; the session ends after the
// last one, not when the input does. Repeated, since the loss was a race
// (2 answers in 10 runs before the fix).
func TestStdioAnswersWhatItReadBeforeEndOfInput(t *testing.T) {
	t.Parallel()
	srv, err := mcpserver.New(mcpserver.Config{})
	require.NoError(t, err)
	defer srv.Close()
	in := session(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	for run := range 30 {
		var out strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := srv.ServeIO(ctx, io.NopCloser(strings.NewReader(in)), nopWC{&out})
		cancel()
		require.NoError(t, err)
		ids := map[float64]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["result"] != nil {
				ids[m["id"].(float64)] = true
			}
		}
		require.Equal(t, map[float64]bool{1: true, 2: true}, ids, "run %d: answers to the calls read before end of input; wrote %q", run, out.String())
	}
}

// TestStdioEndOfInputWaitsNoLongerThanItsContext: a call still running
// when the input ends holds the session open, but no longer than
// ServeIO's context: cancelled, ServeIO returns at once.
func TestStdioEndOfInputWaitsNoLongerThanItsContext(t *testing.T) {
	t.Parallel()
	cfg := mcpserver.Config{Root: t.TempDir(), State: t.TempDir()}
	cfg.Sim = sim.DefaultConfig()
	cfg.Sim.P, cfg.Sim.WrongAnswers, cfg.Sim.Seed = 0.6, 1, 1
	cfg.Sim.Latency = sim.FixedLatency(time.Hour) // the call never ends by itself
	srv, err := mcpserver.New(cfg)
	require.NoError(t, err)
	defer srv.Close()
	args, _ := json.Marshal(map[string]any{"messages": hanoiMessages(3), "k": 3})
	in := session(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sample_and_vote","arguments":` + string(args) + `}}`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out lockedBuilder
	go func() { done <- srv.ServeIO(ctx, io.NopCloser(strings.NewReader(in)), nopWC{&out}) }()
	select {
	case err := <-done:
		t.Fatalf("ServeIO returned before the call in flight was answered: %v; wrote %q", err, out.String())
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeIO still waits for the call in flight after its context was cancelled")
	}
}

// session is the input of a stdio session: initialize (id 1), the
// initialized notification, then lines, each ended by a newline.
func session(lines ...string) string {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	for _, l := range lines {
		in += l + "\n"
	}
	return in
}

// lockedBuilder is a strings.Builder safe for concurrent use.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUndeclaredLoggingIsNotServed: the server declares no logging
// capability, so logging/setLevel is answered -32601 (method not found),
// not with an empty success; the initialize result declares no logging.
func TestUndeclaredLoggingIsNotServed(t *testing.T) {
	t.Parallel()
	srv, err := mcpserver.New(mcpserver.Config{})
	require.NoError(t, err)
	defer srv.Close()
	in := session(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	var out lockedBuilder
	require.NoError(t, srv.ServeIO(context.Background(), io.NopCloser(strings.NewReader(in)), nopWC{&out}))
	answers := map[float64]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		answers[m["id"].(float64)] = m
	}
	caps := answers[1]["result"].(map[string]any)["capabilities"].(map[string]any)
	assert.NotContains(t, caps, "logging")
	e, _ := answers[2]["error"].(map[string]any)
	require.NotNil(t, e, "logging/setLevel answered %v", answers[2])
	assert.Equal(t, float64(-32601), e["code"])
}
