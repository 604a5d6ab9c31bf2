package mcpserver_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// serveHTTP serves a server on 127.0.0.1:0 and returns its endpoint.
func serveHTTP(t *testing.T, o mcpserver.HTTPOptions) string {
	t.Helper()
	srv, err := mcpserver.New(mcpserver.Config{MaxRequestBytes: 64 << 10})
	require.NoError(t, err)
	addr, err := mcpserver.ListenAddr(":0", false)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTPOn(ctx, ln, o) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done, "a shutdown by ctx is not an error")
		_ = srv.Close()
	})
	return "http://" + ln.Addr().String() + mcpserver.Path
}

func httpClient(t *testing.T, endpoint string, hc *http.Client) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func TestHTTPWithBearerToken(t *testing.T) {
	t.Parallel()
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{Token: "s3cret"})
	require.True(t, strings.HasPrefix(endpoint, "http://127.0.0.1:"), "loopback by default: %s", endpoint)

	cs, err := httpClient(t, endpoint, &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}})
	require.NoError(t, err)
	out := decode[mcpserver.KMinOutput](t, call(t, context.Background(), cs, "kmin", map[string]any{"steps": 1<<20 - 1, "p": 0.9978}, nil))
	assert.Equal(t, 3, out.KMin)

	_, err = httpClient(t, endpoint, &http.Client{})
	require.Error(t, err, "no token, no session")
	_, err = httpClient(t, endpoint, &http.Client{Transport: bearer{"s3cre", http.DefaultTransport}})
	require.Error(t, err, "a wrong token, no session")

	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.True(t, strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), `Bearer realm="mdap", resource_metadata=`), "no error code without credentials (RFC 6750 §3.1): %s", resp.Header.Get("WWW-Authenticate"))
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer s3cre")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`, "a wrong token is named")
}

func TestHTTPWithoutToken(t *testing.T) {
	t.Parallel()
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{NoAuth: true})
	cs, err := httpClient(t, endpoint, &http.Client{})
	require.NoError(t, err)
	out := decode[mcpserver.VoteOutput](t, call(t, context.Background(), cs, "vote", map[string]any{"k": 1, "candidates": []any{cand(`{"a":1}`)}}, nil))
	assert.True(t, out.Decided)

	// A body over the bound is refused with 413.
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 70<<10) + `"}}`
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(big))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}

func TestListenAddrIsLoopbackUnlessAllowed(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		":0":             "127.0.0.1:0",
		"127.0.0.1:8080": "127.0.0.1:8080",
		"[::1]:9":        "[::1]:9",
		"localhost:80":   "localhost:80",
	} {
		got, err := mcpserver.ListenAddr(addr, false)
		require.NoError(t, err, addr)
		assert.Equal(t, want, got)
	}
	for _, addr := range []string{"0.0.0.0:80", "192.168.1.2:80", "example.com:80", "nonsense"} {
		_, err := mcpserver.ListenAddr(addr, false)
		assert.ErrorIs(t, err, mcpserver.ErrListenAddr, addr)
	}
	got, err := mcpserver.ListenAddr(":0", true)
	require.NoError(t, err)
	assert.Equal(t, ":0", got, "remote allowed: every interface")
}

// TestHTTPTokenCheckedBeforeBody: a request without the token is answered
// 401 from its headers alone: the server does not wait for (or read) its
// body, here 4 MB announced and never sent, on a session's POST (whose
// body the server reads before the SDK does).
func TestHTTPTokenCheckedBeforeBody(t *testing.T) {
	t.Parallel()
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{Token: "s3cret"})
	host := strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), mcpserver.Path)
	c, err := net.Dial("tcp", host)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "POST "+mcpserver.Path+" HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: any\r\nContent-Length: 4000000\r\n\r\n{\"jsonrpc\":")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err, "answered before the body came")
	assert.Contains(t, line, "401")
}

// TestHTTPNeedsATokenOrNoAuth: HTTPOptions has no unauthenticated
// default: without Token or NoAuth, ServeHTTPOn refuses to serve
// (ErrConfig) and Handler answers every request 401.
func TestHTTPNeedsATokenOrNoAuth(t *testing.T) {
	t.Parallel()
	srv, err := mcpserver.New(mcpserver.Config{})
	require.NoError(t, err)
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	err = srv.ServeHTTPOn(context.Background(), ln, mcpserver.HTTPOptions{})
	require.ErrorIs(t, err, mcpserver.ErrConfig)
	assert.Contains(t, err.Error(), "NoAuth")

	h := srv.Handler(mcpserver.HTTPOptions{})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, mcpserver.Path, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
}

// TestHTTPStreamOpensWithAPrimingEvent: over streamable HTTP, a request
// answered as a stream of events (protocol 2025-11-25) opens with a
// priming event that carries an id, and its answer has an id too, so a
// client whose stream breaks can resume it with Last-Event-ID (the
// spec's two SHOULDs; events kept up to EventStoreBytes); before them, the
// retry field tells it when (the third).
func TestHTTPStreamOpensWithAPrimingEvent(t *testing.T) {
	t.Parallel()
	endpoint := serveHTTP(t, mcpserver.HTTPOptions{Token: "tok"})
	post := func(body, session string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, body := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/event-stream", body)
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	require.GreaterOrEqual(t, len(events), 3, "the retry field, a priming event, then the answer: %q", body)
	assert.Equal(t, "retry: 2000", events[0], "the stream first says when to reconnect, should it end early")
	events = events[1:]
	assert.Regexp(t, `(?m)^id: \S+`, events[0], "the priming event has an id")
	assert.NotContains(t, events[0], "data: {", "the priming event carries no message")
	assert.Regexp(t, `(?m)^id: \S+`, events[len(events)-1], "the answer has an id")
	assert.Contains(t, events[len(events)-1], `"id":1`)
}
