package problems_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Config.Options spreads the flat settings over the roles: --p with a
// role's own over it, k and prices by role name, the simulated model of
// every role at its role's p; and refuses, naming the field, what no run
// could use.
func TestConfigOptions(t *testing.T) {
	c := problems.Config{P: 0.9, RoleP: map[decompose.Role]float64{decompose.RoleSolve: 0.8}, K: map[string]int{"compose": 4},
		Prices: map[string]string{"all": "1/2"}, Rivals: 3, CoFailure: 0.1, FlagRate: 0.05, Latency: time.Millisecond,
		Models: problems.RoleModels{Models: []string{"sim"}}}
	c.Settings.Seed = 7
	o, err := c.Options()
	require.NoError(t, err)
	assert.Equal(t, 0.8, o.Settings.P[decompose.RoleSolve])
	assert.Equal(t, 0.9, o.Settings.P[decompose.RoleAtomic])
	assert.Equal(t, map[decompose.Role]int{decompose.RoleCompose: 4}, o.Settings.K)
	assert.Equal(t, maker.Price{InputPerMillion: 1, OutputPerMillion: 2}, o.Settings.Prices[decompose.RoleAtomic])
	assert.Nil(t, o.Models, "the simulated model plays every role")
	assert.Equal(t, uint64(7), o.Sim.Seed)
	assert.Equal(t, 0.05, o.Sim.FlagRate)
	assert.Equal(t, decompose.SimRole{P: 0.8, Rivals: 3, CoFailure: 0.1}, o.Sim.Roles[decompose.RoleSolve])
	assert.Equal(t, decompose.SimRole{P: 0.9, Rivals: 3, CoFailure: 0.1}, o.Sim.Roles[decompose.RoleAtomic])

	journal := filepath.Join(t.TempDir(), "j.jsonl")
	for _, bad := range []struct {
		edit  func(*problems.Config)
		field string
	}{
		{func(c *problems.Config) { c.K = map[string]int{"solver": 3} }, "K"},
		{func(c *problems.Config) { c.P = 0.3 }, "P"}, // --p, not one of the roles it spreads to
		{func(c *problems.Config) { c.P = 1.5 }, "P"},
		{func(c *problems.Config) { c.Prices = map[string]string{"solve": "x"} }, "Prices"},
		{func(c *problems.Config) { c.Resume = true }, "Resume"},
		{func(c *problems.Config) { c.Journal, c.Resume = journal, true }, "Journal"},
		{func(c *problems.Config) {
			c.Models.Roles = map[decompose.Role][]string{decompose.RoleSolve: {"openai:x"}}
		}, "Models"},
	} {
		c := c
		bad.edit(&c)
		_, err := c.Options()
		require.ErrorIs(t, err, fielderr.ErrConfig, bad.field)
		assert.Equal(t, bad.field, fielderr.As(err).Fields[0].Name)
	}
	require.NoError(t, os.WriteFile(journal, nil, 0o600))
	c.Journal = journal
	_, err = c.Options()
	assert.Equal(t, "Journal", fielderr.As(err).Fields[0].Name, "a journal is never overwritten")
	c.Resume = true
	_, err = c.Options()
	assert.NoError(t, err)
}
