package mcpserver_test

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
)

// TestRunTaskStopsAtTheServersStepCap covers docs/mcp.md:195-197, "a run
// stops after 100,000 steps" (Config.MaxSteps, "whatever its spec says"):
// a spec allowing 10 steps on a server capped at 4 stops after 4 with a
// tool error, and with the cap left at its default the same spec runs to
// its end. (The default itself, 100,000 steps, is not run: a test of it
// would take a 100,000-step spec.)
func TestRunTaskStopsAtTheServersStepCap(t *testing.T) {
	t.Parallel()
	cfg := mcpserver.Config{Root: t.TempDir(), State: t.TempDir(), MaxSteps: 4}
	cfg.Sim.P, cfg.Sim.Seed = 1, 1
	c, _ := connect(t, cfg)
	res := call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec": counterSpec(10), "k": 1}, nil)
	toolError(t, res, "the run failed after")
	out := structured[mcpserver.RunTaskOutput](t, res)
	assert.False(t, out.Done)
	assert.Equal(t, 4, out.Steps, "the server's cap, not the spec's max_steps (10)")

	cfg.MaxSteps = 0
	c, _ = connect(t, cfg)
	out = decode[mcpserver.RunTaskOutput](t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec": counterSpec(10), "k": 1, "journal": "again.jsonl"}, nil))
	assert.True(t, out.Done, out.Message)
	assert.Equal(t, 10, out.Steps)
}
