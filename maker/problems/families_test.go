package problems_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/sortlist"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sort2 is a new family as a user adds one: sort under another name.
type sort2 struct{ sortlist.Family }

func (sort2) Name() string { return "sort2" }

type sort3 struct{ sortlist.Family }

func (sort3) Name() string { return "sort3" }

func sort2Builtin() problems.Builtin {
	return problems.Builtin{Family: sort2{}, Input: sortlist.Input{}, Short: "sort again", About: "a list", Example: `{"list": [INTEGERS]}`,
		Flags:    []problems.InputFlag{{Name: "list", Usage: "the list", JSON: "a JSON list"}},
		Size:     problems.Size{Flag: "length", Default: 4, Roles: 7, Min: 0, Max: 100, Unit: "numbers", Noun: "a list of", Generate: sortlist.Generate},
		Headline: func(json.RawMessage) string { return "sort2" }}
}

// TestARegisteredFamilyIsABuiltin: one Register call, and the family is
// looked up, listed, generated, solved and calibrated by name as the
// built-in ones are; unregistered, it is gone.
func TestARegisteredFamilyIsABuiltin(t *testing.T) {
	unregister := problems.Register(sort2Builtin())
	assert.Equal(t, []string{"multiply", "sort", "sort2"}, problems.Names())
	fam, err := problems.Lookup("sort2")
	require.NoError(t, err)
	assert.Equal(t, "sort2", fam.Name())
	in, err := problems.Generate("sort2", 3, 6)
	require.NoError(t, err)
	assert.JSONEq(t, string(sortlist.Generate(3, 6)), string(in))
	_, err = problems.Generate("sort2", 3, 101)
	assert.ErrorContains(t, err, "a list of 101: use 0 to 100 numbers")
	res, err := problems.Solve(context.Background(), "sort2", in, problems.Options{})
	require.NoError(t, err)
	require.NotNil(t, res.Correct)
	assert.True(t, *res.Correct)
	assert.Equal(t, 7, problems.DefaultRolesSize("sort2"))
	cfg := problems.RolesConfig{Family: "sort2", Problems: 1, Nodes: 1, Samples: 1, Models: problems.RoleModels{Models: []string{"sim"}}}
	assert.NoError(t, cfg.Validate())

	assert.Panics(t, func() { problems.Register(sort2Builtin()) }, "a name registered twice")
	assert.Panics(t, func() { problems.Register(problems.Builtin{Family: sort2{}}) }, "no generator")
	noLabel := sort2Builtin()
	noLabel.Family, noLabel.Bench.Sizes = sort3{}, []int{5}
	assert.Panics(t, func() { problems.Register(noLabel) }, "bench cells without a label")
	unregister()
	_, err = problems.Lookup("sort2")
	assert.ErrorIs(t, err, problems.ErrFamily)
	assert.ErrorContains(t, err, "use multiply or sort")
	assert.Equal(t, []string{"multiply", "sort"}, problems.Names())
}

// TestBuiltinsGenerateInTheirRange: every built-in family's generator
// makes a problem its family reads, at its bounds and its defaults.
func TestBuiltinsGenerateInTheirRange(t *testing.T) {
	for _, b := range problems.Builtins() {
		for _, n := range []int{b.Size.Min, b.Size.Default, b.Size.Roles} {
			in, err := problems.Generate(b.Name(), 1, n)
			require.NoError(t, err, "%s %d", b.Name(), n)
			_, err = b.Family.Canon(in)
			require.NoError(t, err, "%s %d", b.Name(), n)
			assert.NotEmpty(t, b.Headline(in))
		}
		_, err := problems.Generate(b.Name(), 1, b.Size.Max+1)
		assert.Error(t, err, fmt.Sprintf("%s above its Max", b.Name()))
	}
}

// TestSimModelsPlayAFamilyByName: the simulated model of a built-in
// family's roles, its identity naming the family and the seed; an
// unknown family is ErrFamily.
func TestSimModelsPlayAFamilyByName(t *testing.T) {
	cfg := decompose.SimConfig{Seed: 4, Roles: problems.SimRoles(decompose.SimRole{P: 0.9, Rivals: 2})}
	sims, err := problems.SimModels("multiply", cfg)
	require.NoError(t, err)
	id := maker.ModelIdentity(sims.OneModel())
	assert.Contains(t, id, "multiply")
	other, err := problems.SimModels("multiply", decompose.SimConfig{Seed: 5, Roles: cfg.Roles})
	require.NoError(t, err)
	assert.NotEqual(t, id, maker.ModelIdentity(other.OneModel()), "the seed is part of the route")
	_, err = problems.SimModels("nosuch", cfg)
	assert.ErrorIs(t, err, problems.ErrFamily)
}
