package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/intent/match"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVoteGroupsByTheAnswerSchema: with an answer_schema declaring the
// city "text" and the temperature within 0.5, the vote tool counts
// surface forms as one answer, as a run does; without it they split.
func TestVoteGroupsByTheAnswerSchema(t *testing.T) {
	t.Parallel()
	var schema any
	require.NoError(t, json.Unmarshal([]byte(`{"type": "object", "properties": {
		"city": {"type": "string", "x-mdap-match": "text"},
		"temp": {"type": "number", "x-mdap-match": {"kind": "number", "tolerance": 0.5}}}}`), &schema))
	in := VoteInput{K: 3, Candidates: []Candidate{
		{Text: `{"city": "Paris", "temp": 21}`},
		{Text: `{"city": "paris.", "temp": 21.4}`},
		{Text: `{"city": "Lyon", "temp": 21}`},
		{Text: `{"city": " PARIS ", "temp": 20.8}`},
		{Text: `{"city": "Paris!", "temp": 21.2}`},
	}}
	plain, err := Vote(in, 20)
	require.NoError(t, err)
	assert.False(t, plain.Decided, "five distinct answers by bytes")
	in.AnswerSchema = schema
	got, err := Vote(in, 20)
	require.NoError(t, err)
	require.True(t, got.Decided, got.Message)
	assert.Equal(t, 4, got.Winner.DecidedAt)
	assert.Equal(t, 4, got.Winner.Votes)
	assert.Equal(t, got.Replies[0].Key, got.Replies[3].Key, "one class, its first member's key")
	assert.Equal(t, got.Winner.Key, got.Replies[0].Key)

	in.AnswerSchema = map[string]any{"properties": map[string]any{"city": map[string]any{"x-mdap-match": "fuzzy"}}}
	_, err = Vote(in, 20)
	require.ErrorIs(t, err, ErrArgument)
	require.ErrorIs(t, err, match.ErrMatcher)
	assert.Contains(t, err.Error(), "/properties/city/x-mdap-match")
}
