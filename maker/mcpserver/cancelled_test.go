package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// signalHandler is a slog handler that signals on ch each record whose
// message is msg.
type signalHandler struct {
	msg string
	ch  chan struct{}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.ch <- struct{}{}
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }

// TestMCPCancelledCallGetsNoResponse: over stdio (ServeIO, the transport
// of `maker mcp`), a client cancels a slow sample_and_vote or run_task
// call with notifications/cancelled once its first progress notification
// came; no response with that request's id is ever written (the MCP spec:
// the receiver should not respond to a cancelled request; the SDK alone
// would send the handler's cancellation error), and the session then
// serves the next call. The server's log record of the dropped response
// tells the test the handler has returned, so no wall-clock wait decides
// the outcome.
func TestMCPCancelledCallGetsNoResponse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool string
		id   any
		args map[string]any
	}{
		{"sample_and_vote", 2, map[string]any{"messages": hanoiMessages(3), "k": 50, "parallel": 1}},
		{"run_task", "call-two", map[string]any{"spec": counterSpec(200), "journal": "count.jsonl"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			dropped := make(chan struct{}, 4)
			cfg := mcpserver.Config{Root: t.TempDir(), State: t.TempDir(), Logger: slog.New(signalHandler{"dropped the response to a cancelled request", dropped})}
			cfg.Sim = sim.DefaultConfig()
			if tc.tool == "sample_and_vote" {
				cfg.Sim.P, cfg.Sim.WrongAnswers, cfg.Sim.Seed = 0.6, 1, 1
			}
			cfg.Sim.Latency = sim.FixedLatency(20 * time.Millisecond)
			srv, err := mcpserver.New(cfg)
			require.NoError(t, err)
			defer srv.Close()

			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				err := srv.ServeIO(ctx, inR, nopWC{outW})
				outW.Close()
				done <- err
			}()
			msgs := make(chan map[string]any, 64)
			go func() {
				defer close(msgs)
				lines := bufio.NewScanner(outR)
				lines.Buffer(nil, 1<<20)
				for lines.Scan() {
					var m map[string]any
					if json.Unmarshal(lines.Bytes(), &m) == nil {
						msgs <- m
					}
				}
			}()
			send := func(s string) {
				_, err := io.WriteString(inW, s+"\n")
				require.NoError(t, err)
			}
			idJSON, _ := json.Marshal(tc.id)
			isCancelled := func(m map[string]any) bool {
				_, has := m["id"]
				b, _ := json.Marshal(m["id"])
				return has && m["method"] == nil && string(b) == string(idJSON)
			}
			// next returns the next message that is not a progress
			// notification, failing on a response to the cancelled call.
			next := func(what string) map[string]any {
				for {
					select {
					case m, ok := <-msgs:
						require.True(t, ok, "the session ended while waiting for %s", what)
						require.False(t, isCancelled(m), "a response to the cancelled request %s: %v", idJSON, m)
						if m["method"] == "notifications/progress" {
							continue
						}
						return m
					case <-ctx.Done():
						t.Fatalf("no %s", what)
					}
				}
			}

			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			require.NotNil(t, next("initialize reply")["result"])
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			args, _ := json.Marshal(tc.args)
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"progressToken":"p"}}}`, idJSON, tc.tool, args))
			for m := range msgs { // the call is under way
				require.False(t, isCancelled(m), "the call ended before it was cancelled: %v", m)
				if m["method"] == "notifications/progress" {
					break
				}
			}
			send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"the user pressed stop"}}`, idJSON))
			// Wait until the server has dropped the response; a response
			// read meanwhile fails the test.
			for waiting := true; waiting; {
				select {
				case m, ok := <-msgs:
					require.True(t, ok, "the session ended")
					require.False(t, isCancelled(m), "a response to the cancelled request %s: %v", idJSON, m)
				case <-dropped:
					waiting = false
				case <-ctx.Done():
					t.Fatal("the cancelled call never ended")
				}
			}

			// The session serves the next call.
			send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"kmin","arguments":{"steps":10,"p":0.9}}}`)
			m := next("kmin reply")
			assert.Equal(t, float64(3), m["id"])
			res, _ := m["result"].(map[string]any)
			require.NotNil(t, res, "%v", m)
			assert.NotEqual(t, true, res["isError"], "%v", m)
			inW.Close()
			require.NoError(t, <-done)
			for m := range msgs {
				require.False(t, isCancelled(m), "a response to the cancelled request %s: %v", idJSON, m)
			}
		})
	}
}

// TestMCPHTTPCancelledCallGetsNoResponse: over streamable HTTP (ServeHTTPOn
// on loopback, the transport of `maker mcp --http`), a client that keeps
// a slow sample_and_vote call's event stream open and cancels the call
// with notifications/cancelled (a second POST) after the first progress
// notification reads the stream to its end without a response with the
// call's id (the SDK alone sends "cancelled after N samples"); the
// session then serves the next call.
func TestMCPHTTPCancelledCallGetsNoResponse(t *testing.T) {
	t.Parallel()
	cfg := mcpserver.Config{}
	cfg.Sim = sim.DefaultConfig()
	cfg.Sim.P, cfg.Sim.WrongAnswers, cfg.Sim.Seed = 0.6, 1, 1
	cfg.Sim.Latency = sim.FixedLatency(20 * time.Millisecond)
	srv, err := mcpserver.New(cfg)
	require.NoError(t, err)
	addr, err := mcpserver.ListenAddr(":0", false)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTPOn(ctx, ln, mcpserver.HTTPOptions{NoAuth: true}) }()
	defer func() {
		cancel()
		assert.NoError(t, <-done)
		_ = srv.Close()
	}()
	endpoint := "http://" + ln.Addr().String() + mcpserver.Path

	post := func(session, body string) *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Less(t, resp.StatusCode, 300, resp.Status)
		return resp
	}
	// events returns the JSON-RPC messages of a response body, SSE or
	// JSON, to its end.
	events := func(resp *http.Response, each func(map[string]any)) {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := strings.TrimPrefix(sc.Text(), "data: ")
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				each(m)
			}
		}
	}

	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)
	resp.Body.Close()
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	args, _ := json.Marshal(map[string]any{"messages": hanoiMessages(3), "k": 50, "parallel": 1})
	stream := post(session, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sample_and_vote","arguments":%s,"_meta":{"progressToken":"p"}}}`, args))
	cancelled := false
	events(stream, func(m map[string]any) { // to the stream's end: the call's handler returned
		require.NotContains(t, m, "id", "a response to the cancelled request 2: %v", m)
		if m["method"] == "notifications/progress" && !cancelled {
			cancelled = true
			post(session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user pressed stop"}}`).Body.Close()
		}
	})
	require.True(t, cancelled, "the call ended before its first progress notification")

	var reply map[string]any
	events(post(session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"kmin","arguments":{"steps":10,"p":0.9}}}`), func(m map[string]any) {
		if m["id"] != nil {
			reply = m
		}
	})
	require.NotNil(t, reply, "the session serves the next call")
	assert.Equal(t, float64(3), reply["id"])
	res, _ := reply["result"].(map[string]any)
	require.NotNil(t, res, "%v", reply)
	assert.NotEqual(t, true, res["isError"], "%v", reply)
}
