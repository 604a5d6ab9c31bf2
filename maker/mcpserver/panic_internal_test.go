package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPanicBecomesAToolError registers a tool that panics, through the
// same wrapper as the server's own tools.
func TestPanicBecomesAToolError(t *testing.T) {
	t.Parallel()
	s, err := New(Config{})
	require.NoError(t, err)
	defer s.Close()
	type in struct {
		N int `json:"n" jsonschema:"a number"`
	}
	type out struct {
		Half int `json:"half" jsonschema:"n / 2"`
	}
	addTool(s, &mcp.Tool{Name: "crash", Description: "divides by zero"}, func(_ context.Context, _ *mcp.CallToolRequest, i in) (*mcp.CallToolResult, out, error) {
		zero := 0
		return nil, out{Half: i.N / zero}, nil
	})
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer func() { _ = cs.Close(); _ = ss.Wait() }()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"n": 4}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	msg := res.Content[0].(*mcp.TextContent).Text
	assert.True(t, strings.HasPrefix(msg, "internal error: the crash tool failed"), msg)
	assert.Contains(t, msg, "divide by zero")

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolKMin, Arguments: map[string]any{"steps": 100, "p": 0.9}})
	require.NoError(t, err)
	assert.False(t, res.IsError, "the server keeps serving")
}

func TestJournalLocksWaitForAReleaseThenGiveUp(t *testing.T) {
	t.Parallel()
	j := journalLocks{busy: map[string]chan struct{}{}}
	ctx := context.Background()
	release, err := j.acquire(ctx, "a", 0)
	require.NoError(t, err)
	_, err = j.acquire(ctx, "a", 0)
	assert.ErrorIs(t, err, ErrJournalBusy)
	other, err := j.acquire(ctx, "b", 0)
	require.NoError(t, err, "another journal is free")
	other()
	done := make(chan error, 1)
	go func() {
		r, err := j.acquire(ctx, "a", JournalGrace)
		if err == nil {
			r()
		}
		done <- err
	}()
	release()
	assert.NoError(t, <-done, "a waiting call gets the journal once it is released")
}
