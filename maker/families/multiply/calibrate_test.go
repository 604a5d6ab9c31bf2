package multiply_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Calibrate measures each role's p: on the sim, with every role at its
// own p, each estimate is near it and its lower bound below it.
func TestCalibrateMeasuresEachRole(t *testing.T) {
	t.Parallel()
	fam := multiply.Family{}
	want := map[decompose.Role]float64{decompose.RoleAtomic: 0.95, decompose.RoleDecompose: 0.8,
		decompose.RoleDiscriminate: 0.7, decompose.RoleSolve: 0.9, decompose.RoleCompose: 0.85}
	sc := decompose.SimConfig{Seed: 4, Roles: map[decompose.Role]decompose.SimRole{}, FlagRate: 0.1}
	for r, p := range want {
		sc.Roles[r] = decompose.SimRole{P: p, Rivals: 3}
	}
	sims, err := decompose.NewSim(fam, fam, sc)
	require.NoError(t, err)
	var inputs []json.RawMessage
	for s := range uint64(3) {
		inputs = append(inputs, multiply.Generate(s, 6, 6))
	}
	c, err := decompose.Calibrate(context.Background(), fam, fam, inputs, sims.Models(), decompose.CalibrateOptions{Samples: 12})
	require.NoError(t, err)
	for r, p := range want {
		t.Logf("%s: %d of %d right: p %.3f (lower %.3f), sim's %.2f", r, c.Right[r], c.Valid[r], c.P[r], c.Lower[r], p)
		assert.Greater(t, c.Valid[r], 300, r)
		assert.InDelta(t, p, c.P[r], 0.05, r)
		assert.Less(t, c.Lower[r], p, r)
		assert.Greater(t, c.Lower[r], p-0.1, r)
	}
}
