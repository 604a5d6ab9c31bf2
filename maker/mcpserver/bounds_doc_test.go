package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultRequestBoundsAsDocumented covers docs/mcp.md:145 (max_samples
// "default 100·k, at most --max-samples", whose default is 1000, :80) and
// :195-196 ("at most 1000 candidates and 1000 messages"), on a server with the
// default Config: 1000 candidates are voted on and 1001 refused; 1001
// messages are refused for their number and 1000 are not; a race whose
// every reply is red-flagged stops undecided after 100·k samples, and at
// k = 20 after the cap of 1000, not 2000.
func TestDefaultRequestBoundsAsDocumented(t *testing.T) {
	t.Parallel()
	cfg := mcpserver.Config{}
	// Every reply cut off at the cap: none votes, so a race runs to its sample budget.
	cfg.Sim.P, cfg.Sim.FlagRate, cfg.Sim.Seed = 0.9, 1, 1
	cfg.Sim.Flags = sim.FlagMix{CutOff: 1}
	c, _ := connect(t, cfg)
	ctx := context.Background()

	cands := make([]any, 1001)
	for i := range cands {
		cands[i] = cand("a")
	}
	decode[mcpserver.VoteOutput](t, call(t, ctx, c.ClientSession, "vote", map[string]any{"candidates": cands[:1000]}, nil))
	toolError(t, call(t, ctx, c.ClientSession, "vote", map[string]any{"candidates": cands}, nil), "at most 1000")

	msgs := make([]map[string]any, 1001)
	for i := range msgs {
		msgs[i] = map[string]any{"role": "user", "content": "hi"}
	}
	toolError(t, call(t, ctx, c.ClientSession, "sample_and_vote", map[string]any{"messages": msgs}, nil), "1001 messages: this server takes at most 1000")
	res := call(t, ctx, c.ClientSession, "sample_and_vote", map[string]any{"messages": msgs[:1000]}, nil)
	require.True(t, res.IsError, "sim answers only Hanoi step prompts")
	assert.False(t, strings.Contains(text(res), "messages: this server takes at most"), "1000 messages are within the bound: %s", text(res))

	for k, want := range map[int]int{3: 300, 20: 1000} {
		out := decode[mcpserver.SampleAndVoteOutput](t, call(t, ctx, c.ClientSession, "sample_and_vote", map[string]any{"messages": hanoiMessages(3), "k": k}, nil))
		assert.False(t, out.Decided, "k %d", k)
		assert.Equal(t, want, out.Tally.Valid+out.Tally.Flagged, "k %d: the samples tallied before the race gave up: %+v", k, out.Tally)
	}
}
