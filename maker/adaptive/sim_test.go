package adaptive_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/require"
)

// simModel is the simulated model of Towers of Hanoi at p, with 5% red
// flags.
func simModel(t *testing.T, seed uint64, p float64) *sim.Model {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = seed, p, 0.05
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	return m
}
