package simserver_test

import (
	"net/http"
	"testing"

	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
)

// TestRequestRangesAsDocumented covers the ranges docs/servesim.md:94-96
// and :158 give: max_tokens and max_completion_tokens "at most 131072"
// ("must be 1 to 131072"), temperature "0 to 2", n "1 to 128 choices".
// Each bound is accepted and the value just past it refused with a 400
// naming the field.
func TestRequestRangesAsDocumented(t *testing.T) {
	t.Parallel()
	_, base := serve(t, hanoiConfig(sim.DefaultConfig()))
	msgs := wire(firstStep(t, 3))
	for _, tc := range []struct {
		field string
		v     any
		ok    bool
	}{
		{"max_tokens", 1, true},
		{"max_tokens", 131072, true},
		{"max_tokens", 131073, false},
		{"max_completion_tokens", 131072, true},
		{"max_completion_tokens", 131073, false},
		{"max_completion_tokens", 0, false},
		{"temperature", 0, true},
		{"temperature", 2, true},
		{"temperature", -0.01, false},
		{"temperature", 2.01, false},
		{"n", 1, true},
		{"n", 128, true},
		{"n", 129, false},
	} {
		code, _, body := post(t, base+"/chat/completions", map[string]any{"messages": msgs, tc.field: tc.v})
		if tc.ok {
			assert.Equal(t, http.StatusOK, code, "%s %v: %v", tc.field, tc.v, body)
			continue
		}
		assert.Equal(t, http.StatusBadRequest, code, "%s %v", tc.field, tc.v)
		assert.Equal(t, tc.field, errorOf(t, body)["param"], "%s %v", tc.field, tc.v)
	}
}
