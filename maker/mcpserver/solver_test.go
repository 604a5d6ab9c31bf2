package mcpserver_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callCounter is a maker.Observer that counts model calls.
type callCounter struct{ calls atomic.Int64 }

func (o *callCounter) StartRun(ctx context.Context, _ maker.RunInfo) (context.Context, func(*maker.Report, error)) {
	return ctx, func(*maker.Report, error) {}
}
func (o *callCounter) StartStep(ctx context.Context, _ int) (context.Context, func(*journal.StepRecord, *maker.Report, error)) {
	return ctx, func(*journal.StepRecord, *maker.Report, error) {}
}
func (o *callCounter) StartCall(ctx context.Context, _ maker.CallInfo) (context.Context, func(maker.CallResult)) {
	o.calls.Add(1)
	return ctx, func(maker.CallResult) {}
}
func (o *callCounter) StartTool(ctx context.Context, _ maker.ToolInfo) (context.Context, func(intent.Observation, error)) {
	return ctx, func(intent.Observation, error) {}
}

// TestSampleAndVoteUsesTheServersSolverSettings: sample_and_vote's
// samples are drawn by the Solver run_task uses (one constructor), so the
// server's ToolDeclaration and Observer reach them: with tools declared
// in the prompt, the provider is sent no native tool; every call is
// observed. Before, sample_and_vote built its own Solver with neither:
// the tools went natively and no call was observed.
func TestSampleAndVoteUsesTheServersSolverSettings(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t)
	obs := &callCounter{}
	c, _ := connect(t, mcpserver.Config{Models: []string{"openai:fake"}, BaseURL: fake.URL, ToolDeclaration: maker.DeclarePrompt, Observer: obs})
	out := decode[mcpserver.SampleAndVoteOutput](t, call(t, context.Background(), c.ClientSession, "sample_and_vote", map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "Which file holds the version?"}},
		"tools":    readFileTool,
		"k":        2, "parallel": 1,
	}, nil))
	require.NotZero(t, out.Launched, out.Message)
	fake.mu.Lock()
	tools := fake.tools
	fake.mu.Unlock()
	assert.Zero(t, tools, "tools declared in the prompt, as the server says, not natively")
	assert.Equal(t, int64(out.Launched), obs.calls.Load(), "every call observed")
}

// TestRunTaskCountsCheckedSteps: run_task reports the steps a spec's
// checker verified and the vote-only ones.
func TestRunTaskCountsCheckedSteps(t *testing.T) {
	t.Parallel()
	cfg := mcpserver.Config{Root: t.TempDir(), State: t.TempDir()}
	cfg.Sim.P = 1
	c, _ := connect(t, cfg)
	sp := counterSpec(4)
	sp["checker"] = map[string]any{"properties": map[string]any{"answer": map[string]any{"properties": map[string]any{"state": map[string]any{"minimum": 1}}}}}
	out := decode[mcpserver.RunTaskOutput](t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec": sp}, nil))
	require.True(t, out.Done, out.Message)
	assert.Equal(t, 4, out.Checked)
	assert.Zero(t, out.VoteOnly)

	out = decode[mcpserver.RunTaskOutput](t, call(t, context.Background(), c.ClientSession, "run_task", map[string]any{"spec": counterSpec(3)}, nil))
	require.True(t, out.Done, out.Message)
	assert.Zero(t, out.Checked)
	assert.Equal(t, 3, out.VoteOnly)
}
