package simserver_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerIdentityIsItsModels: the identity the server logs is the one
// its simulated model gives a journal, for the seed and p it was given.
func TestServerIdentityIsItsModels(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 7, 0.9
	s, err := simserver.New(simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	require.NoError(t, err)
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	assert.Equal(t, m.Identity(), s.Identity())
	assert.Contains(t, s.Identity(), "seed=7 p=0.9 ")
}

func TestFaultsString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "none", simserver.Faults{RetryAfter: 3}.String(), "a Retry-After alone is no fault")
	assert.Equal(t, "429 0.05 (Retry-After 2s), 500 0, hang 0.02, truncate 0, garbage 0.1",
		simserver.Faults{RateLimit: 0.05, RetryAfter: 2, Hang: 0.02, Garbage: 0.1}.String())
}
