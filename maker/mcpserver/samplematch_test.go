package mcpserver_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSampleAndVoteKeysByTheAnswerSchema: with an answer_schema, the
// samples are keyed by its matchers (here next_state a set: pegs in any
// order), as a run of a spec with that contract keys them; the winner's
// key is the matcher's, not the plain canonical key; a bad schema is an
// argument error naming the annotation.
func TestSampleAndVoteKeysByTheAnswerSchema(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, mcpserver.Config{})
	ctx := context.Background()
	schemaText := `{"type": "object", "properties": {
		"move": {"items": {"x-mdap-match": {"kind": "number", "tolerance": 0.5}}},
		"next_state": {"x-mdap-match": "set"}}}`
	var schema any
	require.NoError(t, json.Unmarshal([]byte(schemaText), &schema))
	out := decode[mcpserver.SampleAndVoteOutput](t, call(t, ctx, c.ClientSession, "sample_and_vote",
		map[string]any{"messages": hanoiMessages(3), "answer_schema": schema}, nil))
	require.True(t, out.Decided, out.Message)
	m, err := match.New([]byte(schemaText))
	require.NoError(t, err)
	want, err := m.Key(*out.Winner.Output)
	require.NoError(t, err)
	plain, err := intent.Key(*out.Winner.Output)
	require.NoError(t, err)
	assert.Equal(t, strconv.FormatUint(want, 16), out.Winner.Key)
	assert.NotEqual(t, strconv.FormatUint(plain, 16), out.Winner.Key, "the set's normal form is keyed")
	votes := 0
	for _, s := range out.Samples {
		if s.Counted && s.Key == out.Winner.Key {
			votes++
		}
	}
	assert.Equal(t, out.Winner.Votes, votes, "the samples' keys add up to the race's votes")

	bad := map[string]any{"properties": map[string]any{"move": map[string]any{"x-mdap-match": "judge"}}}
	toolError(t, call(t, ctx, c.ClientSession, "sample_and_vote", map[string]any{"messages": hanoiMessages(3), "answer_schema": bad}, nil),
		"/properties/move/x-mdap-match", `no judge here`)
}
