package problems_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rolesConfig() problems.RolesConfig {
	return problems.RolesConfig{
		Family: "sort", Size: 8, Problems: 2, Nodes: 6, Samples: 10, Seed: 3,
		Models: problems.RoleModels{Models: []string{"sim"}},
		Sim:    decompose.SimConfig{Seed: 3, Roles: problems.SimRoles(decompose.SimRole{P: 0.8, Rivals: 2})},
	}
}

// On the simulated model at p 0.8 every role's estimate is near 0.8 and
// its lower bound below it; the table and the plan line say so.
func TestCalibrateRolesOnTheSim(t *testing.T) {
	cal, err := problems.CalibrateRoles(context.Background(), rolesConfig())
	require.NoError(t, err)
	assert.Equal(t, "sort", cal.Family)
	assert.Equal(t, 8, cal.Size)
	for _, r := range decompose.Roles {
		assert.Positive(t, cal.Valid[r], r)
		assert.InDelta(t, 0.8, cal.P[r], 0.2, r)
		assert.Less(t, cal.Lower[r], cal.P[r], r)
	}
	var b strings.Builder
	require.NoError(t, cal.WriteText(&b, "sim"))
	out := b.String()
	assert.Contains(t, out, "sort roles on 2 seeded problems of size 8 (model sim), 10 replies per role at each node\n")
	assert.Contains(t, out, "plan with: maker sort --p-atomic ")
	assert.Equal(t, 2+len(decompose.Roles)+1, strings.Count(out, "\n"), out)
}

// Size 0 is the family's default size, as the field's doc says.
func TestCalibrateRolesDefaultSize(t *testing.T) {
	c := rolesConfig()
	c.Size, c.Problems, c.Nodes, c.Samples = 0, 1, 1, 1
	cal, err := problems.CalibrateRoles(context.Background(), c)
	require.NoError(t, err)
	assert.Equal(t, problems.DefaultRolesSize("sort"), cal.Size)
	assert.Equal(t, 20, cal.Size)
}

// Each refusal names its field, and nothing is asked.
func TestRolesConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		set   func(*problems.RolesConfig)
		field string
	}{
		{func(c *problems.RolesConfig) { c.Family = "hanoi" }, "Family"},
		{func(c *problems.RolesConfig) { c.Problems = 0 }, "Problems"},
		{func(c *problems.RolesConfig) { c.Problems = problems.MaxRolesProblems + 1 }, "Problems"},
		{func(c *problems.RolesConfig) { c.Nodes = 0 }, "Nodes"},
		{func(c *problems.RolesConfig) { c.Nodes = problems.MaxRolesNodes + 1 }, "Nodes"},
		{func(c *problems.RolesConfig) { c.Samples = 0 }, "Samples"},
		{func(c *problems.RolesConfig) { c.Samples = problems.MaxRolesSamples + 1 }, "Samples"},
		{func(c *problems.RolesConfig) { c.Size = -1 }, "Size"},
	} {
		c := rolesConfig()
		tc.set(&c)
		_, err := problems.CalibrateRoles(context.Background(), c)
		fe := fielderr.As(err)
		require.NotNil(t, fe, "%s: %v", tc.field, err)
		assert.Equal(t, tc.field, fe.Fields[0].Name)
		assert.Equal(t, tc.field == "Family", errors.Is(err, problems.ErrFamily), tc.field)
		assert.Equal(t, err, c.Validate(), tc.field)
	}
	c := rolesConfig()
	c.Models = problems.RoleModels{Models: []string{"openai:x", "sim"}}
	_, err := problems.CalibrateRoles(context.Background(), c)
	fe := fielderr.As(err)
	require.NotNil(t, fe, "%v", err)
	assert.Equal(t, "Models", fe.Fields[0].Name)
}
