package mcpserver_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSolveProblemMultipliesAndSortsAndResumes(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	cfg := mcpserver.Config{State: state}
	cfg.Sim.Seed = 3
	c, _ := connect(t, cfg)
	ctx := context.Background()
	out := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem", map[string]any{"multiply": map[string]any{"a": "123456", "b": "654321"}}, nil))
	assert.True(t, out.Solved, out.Message)
	assert.Equal(t, "80779853376", out.Answer)
	assert.True(t, out.Correct)
	assert.Positive(t, out.Roles["solve"].Decisions)
	assert.FileExists(t, filepath.Join(state, out.Journal))

	// Again: refused, its journal exists; resumed: every decision read back.
	toolError(t, call(t, ctx, c.ClientSession, "solve_problem", map[string]any{"multiply": map[string]any{"a": "123456", "b": "654321"}}, nil), "already exists")
	again := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem", map[string]any{"multiply": map[string]any{"a": "123456", "b": "654321"}, "resume": true}, nil))
	assert.Equal(t, out.Answer, again.Answer)
	assert.Equal(t, out.Samples, again.Samples)
	assert.Positive(t, again.Resumed)

	s := decode[mcpserver.SolveProblemOutput](t, call(t, ctx, c.ClientSession, "solve_problem", map[string]any{"sort": map[string]any{"list": []int{4, -2, 9, 4}}, "p": 0.95, "strategy": "first-to-k"}, nil))
	assert.True(t, s.Solved, s.Message)
	assert.Equal(t, []any{-2.0, 4.0, 4.0, 9.0}, s.Answer)
}

func TestSolveProblemRefusesBadProblems(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{State: t.TempDir(), MaxSteps: 1000})
	ctx := context.Background()
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "exactly one problem"},
		{map[string]any{"multiply": map[string]any{"a": "1x", "b": "2"}, "sort": map[string]any{"list": []int{1}}}, "exactly one problem"},
		{map[string]any{"multiply": map[string]any{"a": "1x", "b": "2"}}, "decimal digits"},
		{map[string]any{"multiply": map[string]any{"a": "123456789012", "b": "123456789012"}}, "over this server's bound of 1000"},
		{map[string]any{"sort": map[string]any{"list": []int{1, 2}}, "p": 0.4}, "above 1/2"},
		{map[string]any{"sort": map[string]any{"list": []int{1, 2}}, "journal": "../x"}, "plain file name"},
		{map[string]any{"sort": map[string]any{"list": []int{1, 2}}, "resume": true}, "no run to resume"},
	} {
		toolError(t, call(t, ctx, c.ClientSession, "solve_problem", tc.args, nil), tc.want)
	}
	// Without a state folder the tool says so.
	c2, _ := connect(t, mcpserver.Config{})
	toolError(t, call(t, ctx, c2.ClientSession, "solve_problem", map[string]any{"sort": map[string]any{"list": []int{1}}}, nil), "state folder")
	require.NotNil(t, c2)
}
