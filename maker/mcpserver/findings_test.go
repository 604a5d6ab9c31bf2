package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKZeroRefused: k: 0 is refused by the input schema (minimum 1), not
// silently taken as the default 3; k left out still means 3.
func TestKZeroRefused(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{})
	ctx := context.Background()
	for _, tool := range []string{"sample_and_vote", "vote"} {
		args := map[string]any{"k": 0, "messages": hanoiMessages(3), "replies": []string{"a"}}
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			assert.Contains(t, err.Error(), "minimum", tool)
			continue
		}
		require.True(t, res.IsError, "%s: k 0 refused", tool)
		assert.Contains(t, text(res), "minimum", tool)
	}
	res := call(t, ctx, c.ClientSession, "sample_and_vote", map[string]any{"messages": hanoiMessages(3)}, nil)
	out := structured[mcpserver.SampleAndVoteOutput](t, res)
	assert.Equal(t, 3, out.K, "left out: the default")
}

// TestSampleAndVotePermanentErrorNotRetried: a provider answering 404 (a
// base URL without its /v1) is a permanent error: the race stops at once,
// with at most the samples already in flight sent (not the 11 retries of
// the error budget), and the tool error says why. Progress never passes
// its total.
func TestSampleAndVotePermanentErrorNotRetried(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	c, _ := connect(t, mcpserver.Config{Models: []string{"openai:gpt-x"}, BaseURL: srv.URL})
	res := call(t, context.Background(), c.ClientSession, "sample_and_vote",
		map[string]any{"messages": []map[string]any{{"role": "user", "content": "hi"}}, "k": 2, "parallel": 1}, "tok")
	require.True(t, res.IsError, text(res))
	assert.Contains(t, text(res), "refused for good")
	assert.LessOrEqual(t, calls.Load(), int64(3), "one sample (its HTTP client tries up to 3 times), not the 11 of the error budget (33 calls before the fix)")
	for _, n := range c.notes("tok") {
		assert.LessOrEqual(t, n.Progress, n.Total, "progress %v of %v", n.Progress, n.Total)
	}
}
