package simserver_test

import (
	"net/http"
	"testing"

	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFaultedRequestUsesUpItsIndex covers docs/servesim.md:125-126: "A
// faulted request uses up its sample index, so a client that retries
// without a seed gets the next one." A fresh server's unseeded requests,
// one at a time, get what seeds 0, 1, 2, ... get from another fresh
// server, faults included: after a fault the next unseeded request is
// the next index, not the faulted one again.
func TestFaultedRequestUsesUpItsIndex(t *testing.T) {
	t.Parallel()
	cfg := hanoiConfig(sim.Config{Seed: 4, P: 0.7, WrongAnswers: 4})
	cfg.Faults = simserver.Faults{ServerError: 0.2, RateLimit: 0.2, RetryAfter: 1}
	_, unseeded := serve(t, cfg)
	_, seeded := serve(t, cfg)
	msgs := wire(firstStep(t, 4))
	faulted := 0
	for i := range 30 {
		codeU, _, u := post(t, unseeded+"/chat/completions", map[string]any{"messages": msgs})
		codeS, _, s := post(t, seeded+"/chat/completions", map[string]any{"messages": msgs, "seed": i})
		require.Equal(t, codeS, codeU, "index %d", i)
		assert.Equal(t, s["choices"], u["choices"], "index %d", i)
		assert.Equal(t, s["error"], u["error"], "index %d", i)
		if codeU != http.StatusOK && i < 29 {
			faulted++
		}
	}
	assert.Positive(t, faulted, "some request before the last was faulted")
}
