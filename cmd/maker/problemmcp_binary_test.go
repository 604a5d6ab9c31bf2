package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker mcp's solve_problem runs a problem spec's problem from a spec
// file under --root, on the simulated model (the spec names the sort
// family), and refuses a spec_path outside the root.
func TestBinaryMCPProblemSpec(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	b, err := os.ReadFile(filepath.Join(problemSpecs, "sort-spec.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "sort.json"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(root), "outside.json"), b, 0o644))
	cmd := exec.Command(binary, "mcp", "--root", root, "--state", state, "--log-level", "warn")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "binary-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	out := ok(t, callTool(t, ctx, cs, "solve_problem", map[string]any{"problem": map[string]any{
		"spec_path": "sort.json", "input": map[string]any{"list": []int{5, 3, 9, 1, 7}}}}, ""))
	assert.Equal(t, true, out["solved"], out["message"])
	assert.Equal(t, true, out["checked"])
	assert.Equal(t, []any{1.0, 3.0, 5.0, 7.0, 9.0}, out["answer"])
	assert.FileExists(t, filepath.Join(state, out["journal"].(string)))

	res := callTool(t, ctx, cs, "solve_problem", map[string]any{"problem": map[string]any{
		"spec_path": "../outside.json", "input": map[string]any{"list": []int{2, 1}}}}, "")
	require.True(t, res.IsError, resultText(res))
	assert.Contains(t, resultText(res), "relative to the server's root")
}
