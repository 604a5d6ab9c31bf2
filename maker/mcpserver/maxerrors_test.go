package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaxErrorsZeroToleratesNone holds max_errors to the CLI's meaning of
// --max-errors 0: the first failed model call ends the race, where leaving
// it out tolerates vote.DefaultMaxErrors.
func TestMaxErrorsZeroToleratesNone(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `{"error": {"message": "overloaded", "type": "server_error"}}`, http.StatusInternalServerError)
	}))
	t.Cleanup(down.Close)
	c, _ := connect(t, mcpserver.Config{Models: []string{"openai:fake"}, BaseURL: down.URL})
	ask := func(extra map[string]any) mcpserver.SampleAndVoteOutput {
		args := map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": "Which file holds the version?"}},
			"k":        2, "parallel": 1,
		}
		for k, v := range extra {
			args[k] = v
		}
		return structured[mcpserver.SampleAndVoteOutput](t, call(t, context.Background(), c.ClientSession, "sample_and_vote", args, nil))
	}
	none := ask(map[string]any{"max_errors": 0})
	require.False(t, none.Decided)
	assert.Equal(t, 1, none.Errors, "max_errors 0: the first failed call ends the race; %s", none.Message)
	two := ask(map[string]any{"max_errors": 2})
	assert.Equal(t, 3, two.Errors, "max_errors 2 tolerates two failed calls and ends at the third; %s", two.Message)
	res := call(t, context.Background(), c.ClientSession, "sample_and_vote", map[string]any{
		"messages":   []any{map[string]any{"role": "user", "content": "x"}},
		"max_errors": -1,
	}, nil)
	toolError(t, res, "max_errors -1")
}
