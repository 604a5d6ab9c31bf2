package simserver_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResponseFormatRefusedLikeStream: a structured-output request
// (json_schema, json_object) is refused with a 400 naming
// response_format, as stream is, instead of answered with prose; text is
// accepted.
func TestResponseFormatRefusedLikeStream(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1}))
	msgs := wire(firstStep(t, 3))
	for _, c := range []struct {
		field string
		value any
		code  int
	}{
		{"stream", true, http.StatusBadRequest},
		{"response_format", map[string]any{"type": "json_object"}, http.StatusBadRequest},
		{"response_format", map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "x", "schema": map[string]any{}}}, http.StatusBadRequest},
		{"response_format", map[string]any{"type": "text"}, http.StatusOK},
	} {
		code, _, body := post(t, base+"/chat/completions", map[string]any{"messages": msgs, c.field: c.value})
		assert.Equal(t, c.code, code, "%s %v: %v", c.field, c.value, body)
		if c.code == http.StatusBadRequest {
			e := errorOf(t, body)
			assert.Equal(t, c.field, e["param"], "%v", body)
		}
	}
}

// TestMaxTokensZeroRefused: max_tokens 0 is refused, as its own message
// says (1 to 131072).
func TestMaxTokensZeroRefused(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1}))
	for _, f := range []string{"max_tokens", "max_completion_tokens"} {
		code, _, body := post(t, base+"/chat/completions", map[string]any{"messages": wire(firstStep(t, 3)), f: 0})
		assert.Equal(t, http.StatusBadRequest, code, f)
		assert.Contains(t, fmt.Sprint(errorOf(t, body)["message"]), "want 1 to", f)
	}
}

// TestIDsUniqueAcrossRequests: the same seeded request twice, on one
// server and on two, gives four different response ids; the replies stay
// the same.
func TestIDsUniqueAcrossRequests(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1}))
	_, base2 := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1}))
	req := map[string]any{"messages": wire(firstStep(t, 3)), "seed": 3}
	seen := map[string]bool{}
	var replies []any
	for _, b := range []string{base, base, base2, base2} {
		code, _, body := post(t, b+"/chat/completions", req)
		require.Equal(t, http.StatusOK, code)
		id := body["id"].(string)
		assert.False(t, seen[id], "id %s repeated", id)
		seen[id] = true
		replies = append(replies, body["choices"])
	}
	assert.Equal(t, replies[0], replies[1], "the replies are reproducible")
	assert.Equal(t, replies[0], replies[2])
}

// TestWhatCannotBeHonouredIsRefused: the simulated model cannot be made to
// call a tool (tool_choice "required" or a named function) and has no
// token probabilities (logprobs, top_logprobs), so such a request gets a
// 400 naming the field, as docs/servesim.md promises, instead of a reply
// that silently ignores it; what it can honour is accepted.
func TestWhatCannotBeHonouredIsRefused(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1}))
	msgs := wire(firstStep(t, 3))
	tools := []map[string]any{{"type": "function", "function": map[string]any{"name": "read_file", "parameters": map[string]any{"type": "object"}}}}
	for _, c := range []struct {
		field string
		value any
		code  int
	}{
		{"tool_choice", "required", http.StatusBadRequest},
		{"tool_choice", map[string]any{"type": "function", "function": map[string]any{"name": "read_file"}}, http.StatusBadRequest},
		{"tool_choice", "auto", http.StatusOK},
		{"tool_choice", "none", http.StatusOK},
		{"logprobs", true, http.StatusBadRequest},
		{"logprobs", false, http.StatusOK},
		{"top_logprobs", 3, http.StatusBadRequest},
	} {
		code, _, body := post(t, base+"/chat/completions", map[string]any{"messages": msgs, "tools": tools, c.field: c.value})
		assert.Equal(t, c.code, code, "%s %v: %v", c.field, c.value, body)
		if c.code == http.StatusBadRequest {
			assert.Equal(t, c.field, errorOf(t, body)["param"], "%v", body)
		}
	}
}

// TestEveryResponseHasARequestID: every answer, a completion or an error,
// carries an X-Request-Id (the header OpenAI's clients read as the
// request id), different on each request.
func TestEveryResponseHasARequestID(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.Config{Seed: 1, P: 1}))
	seen := map[string]bool{}
	for _, body := range []any{
		map[string]any{"messages": wire(firstStep(t, 3))},
		map[string]any{"messages": wire(firstStep(t, 3))},
		map[string]any{"messages": wire(firstStep(t, 3)), "stream": true},
	} {
		_, h, _ := post(t, base+"/chat/completions", body)
		id := h.Get("X-Request-Id")
		assert.Regexp(t, `^req_[0-9a-f]{16}$`, id)
		assert.False(t, seen[id], "request id %s repeated", id)
		seen[id] = true
	}
}
