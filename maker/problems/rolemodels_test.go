package problems_test

import (
	"testing"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoleModelsSimPlaysEveryRoleOrNone: the simulated model beside a
// real one is refused naming the field at fault (the role's own, or
// Models and the role that made a real model), and every "sim" is the
// simulated model of every role (Open returns no models).
func TestRoleModelsSimPlaysEveryRoleOrNone(t *testing.T) {
	solve := decompose.Role("solve")
	for _, c := range []struct {
		name   string
		m      problems.RoleModels
		fields []fielderr.Field
	}{
		{"a role's own sim", problems.RoleModels{Models: []string{"openai:x"}, Roles: map[decompose.Role][]string{solve: {"sim"}}},
			[]fielderr.Field{{Name: "Roles[solve]", Value: "sim"}}},
		{"sim in a role's ensemble", problems.RoleModels{Models: []string{"sim"}, Roles: map[decompose.Role][]string{solve: {"sim", "openai:x"}}},
			[]fielderr.Field{{Name: "Roles[solve]", Value: "sim"}}},
		{"sim under a real role", problems.RoleModels{Models: []string{"sim"}, Roles: map[decompose.Role][]string{solve: {"openai:x"}}},
			[]fielderr.Field{{Name: "Models", Value: "sim"}, {Name: "Roles[solve]", Value: "openai:x"}}},
		{"sim in every role's ensemble", problems.RoleModels{Models: []string{"openai:x", "sim"}},
			[]fielderr.Field{{Name: "Models", Value: "sim"}}},
	} {
		err := c.m.Validate()
		require.ErrorIs(t, err, fielderr.ErrConfig, c.name)
		fe := fielderr.As(err)
		require.NotNil(t, fe, c.name)
		assert.Equal(t, c.fields, fe.Fields, c.name)
		assert.Contains(t, fe.Remedy(), "plays every role or none", c.name)
		ms, err := c.m.Open(models.Options{})
		assert.Nil(t, ms, c.name)
		assert.Equal(t, fe, fielderr.As(err), "%s: Open refuses as Validate", c.name)
	}

	sim := problems.RoleModels{Models: []string{"sim"}, Roles: map[decompose.Role][]string{solve: {"sim"}}}
	require.NoError(t, sim.Validate())
	assert.True(t, sim.Sim())
	ms, err := sim.Open(models.Options{})
	require.NoError(t, err)
	assert.Nil(t, ms, "the caller builds the simulated model")

	every := problems.RoleModels{Models: []string{"sim"}, Roles: map[decompose.Role][]string{}}
	for _, r := range decompose.Roles {
		every.Roles[r] = []string{"openai:x"}
	}
	assert.NoError(t, every.Validate(), "a role without its own specs plays Models; none here")
}

// TestRoleModelsOpen opens each role's specs (Roles over Models), a
// role's bad spec named by its field, without a call.
func TestRoleModelsOpen(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	solve := decompose.Role("solve")
	m := problems.RoleModels{Models: []string{"openai:big"}, Roles: map[decompose.Role][]string{solve: {"openai:small"}}}
	ms, err := m.Open(models.Options{BaseURL: "http://127.0.0.1:1/v1"})
	require.NoError(t, err)
	require.Len(t, ms, len(decompose.Roles))
	assert.Equal(t, []string{"openai:small"}, m.Of(solve))
	assert.Equal(t, []string{"openai:big"}, m.Of("compose"))
	assert.NotSame(t, ms[solve], ms["compose"], "the solver has its own model")
	assert.Same(t, ms["atomic"], ms["compose"], "roles of the same specs share one")

	bad := problems.RoleModels{Models: []string{"openai:big"}, Roles: map[decompose.Role][]string{"compose": {"nosuch:model"}}}
	fe := fielderr.As(bad.Validate())
	require.NotNil(t, fe)
	assert.Equal(t, []fielderr.Field{{Name: "Roles[compose]", Value: "nosuch:model"}}, fe.Fields)
	fe = fielderr.As(problems.RoleModels{Models: []string{"nosuch:model"}}.Validate())
	require.NotNil(t, fe)
	assert.Equal(t, "Models", fe.Fields[0].Name)
}
