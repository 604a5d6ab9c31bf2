package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// client is an SDK client session on a server, with the progress
// notifications it received.
type client struct {
	*mcp.ClientSession
	mu       sync.Mutex
	progress map[any][]*mcp.ProgressNotificationParams
	notified chan struct{}
}

// newClientOptions returns client options that record progress into c.
func (c *client) options() *mcp.ClientOptions {
	c.progress = map[any][]*mcp.ProgressNotificationParams{}
	c.notified = make(chan struct{}, 1)
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		c.mu.Lock()
		tok := req.Params.ProgressToken
		if f, ok := tok.(float64); ok { // JSON numbers come back as float64
			tok = int(f)
		}
		c.progress[tok] = append(c.progress[tok], req.Params)
		c.mu.Unlock()
		select {
		case c.notified <- struct{}{}:
		default:
		}
	}}
}

// notes returns the progress notifications of token so far.
func (c *client) notes(token any) []*mcp.ProgressNotificationParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), c.progress[token]...)
}

// connect serves a new server for cfg in memory and returns a client
// session on it.
func connect(t *testing.T, cfg mcpserver.Config) (*client, *mcpserver.Server) {
	t.Helper()
	srv, err := mcpserver.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	require.NoError(t, err)
	c := &client{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, c.options()).Connect(ctx, ct, nil)
	require.NoError(t, err)
	c.ClientSession = cs
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
		cancel()
		_ = srv.Close()
	})
	return c, srv
}

// call calls a tool, with progress token tok when it is not nil, and
// returns the result; a protocol error fails the test.
func call(t *testing.T, ctx context.Context, c *mcp.ClientSession, tool string, args any, tok any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if tok != nil {
		p.SetProgressToken(tok)
	}
	res, err := c.CallTool(ctx, p)
	require.NoError(t, err, "%s: a tool error must come back as a result, not a protocol error", tool)
	return res
}

// decode reads a result's structured content into out; it fails the test
// on a tool error.
func decode[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	require.False(t, res.IsError, "tool error: %s", text(res))
	return structured[T](t, res)
}

// structured reads a result's structured content, tool error or not.
func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &out), "%s", b)
	return out
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// toolError asserts that res is a tool error whose text holds every one
// of want.
func toolError(t *testing.T, res *mcp.CallToolResult, want ...string) {
	t.Helper()
	require.True(t, res.IsError, "want a tool error, got %s", text(res))
	for _, w := range want {
		require.Contains(t, text(res), w)
	}
}

// hanoiMessages is the prompt of a Towers of Hanoi step, as messages.
func hanoiMessages(n int) []map[string]any {
	var out []map[string]any
	for _, m := range hanoi.Messages(n, hanoi.Start(n), nil) {
		role := map[string]string{"system": "system", "human": "user", "ai": "assistant"}[string(m.Role)]
		out = append(out, map[string]any{"role": role, "content": m.Parts[0].(llms.TextContent).Text})
	}
	return out
}

// counterSpec is a spec task that counts from 0 to n, one step at a time,
// with its script for the simulated model.
func counterSpec(n int) map[string]any {
	script := make([]any, n)
	for i := range n {
		script[i] = map[string]any{"state": i + 1, "done": i+1 == n}
	}
	return map[string]any{
		"name":          "count",
		"system":        "Add one to the state.",
		"initial_state": 0,
		"answer": map[string]any{
			"type": "object", "required": []string{"state", "done"}, "additionalProperties": false,
			"properties": map[string]any{"state": map[string]any{"type": "integer"}, "done": map[string]any{"type": "boolean"}},
		},
		"max_steps": n,
		"script":    script,
	}
}

// repoRoot copies testdata/spec into a temporary root: the repository
// the find-version spec greps (under repo/) and the specs.
func repoRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	// The server's root holds the specs; find-version's tools work in
	// its "root", repo, inside it.
	require.NoError(t, os.CopyFS(root, os.DirFS("../../testdata/spec")))
	return root
}
