package mcpserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVoteNormalisesToolCallsByTheDeclaredTools: given the tools, the
// vote tool heals a call's arguments against their schema as a run's
// executor does, so two spellings of one call vote together; arguments
// the schema refuses are red-flagged; without tools they split.
func TestVoteNormalisesToolCallsByTheDeclaredTools(t *testing.T) {
	t.Parallel()
	in := VoteInput{K: 2, Candidates: []Candidate{
		{Text: `{"tool_intent": {"tool": "ls", "args": {"paths": "[\"src\"]"}}}`},
		{Text: `{"tool_intent": {"tool": "ls", "args": {"paths": ["src"]}}}`},
		{Text: `{"tool_intent": {"tool": "ls", "args": {"paths": 5}}}`},
		{Text: `{"tool_intent": {"tool": "ls", "args": {"paths": ["docs"]}}}`},
	}}
	plain, err := Vote(in, 20)
	require.NoError(t, err)
	assert.False(t, plain.Decided, "by bytes: three distinct calls and a fourth")
	assert.NotEqual(t, plain.Replies[0].Key, plain.Replies[1].Key)

	in.Tools = []FunctionTool{{Type: "function", Function: FunctionDef{Name: "ls", Parameters: map[string]any{
		"type": "object", "required": []any{"paths"}, "additionalProperties": false,
		"properties": map[string]any{"paths": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}}}}
	got, err := Vote(in, 20)
	require.NoError(t, err)
	require.True(t, got.Decided, got.Message)
	assert.Equal(t, 1, got.Winner.DecidedAt, "the two spellings are one call: 2 votes, decided at the second")
	assert.Equal(t, got.Replies[0].Key, got.Replies[1].Key)
	assert.Contains(t, got.Replies[0].Canonical, `["src"]`)

	in.Candidates = in.Candidates[2:3]
	got, err = Vote(in, 20)
	require.NoError(t, err)
	assert.Equal(t, "invalid arguments", got.Replies[0].Flag, "refused arguments never vote, as in a run")

	in.Tools = append(in.Tools, in.Tools[0])
	_, err = Vote(in, 20)
	require.ErrorIs(t, err, ErrArgument, "a tool declared twice")
}
