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
