package multiply_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// panicky panics when asked whether an input is indivisible.
type panicky struct{ multiply.Family }

func (panicky) Indivisible(json.RawMessage) bool { panic("boom") }

func TestSolveRefusesWhatItCannotRun(t *testing.T) {
	t.Parallel()
	fam := multiply.Family{}
	sims, err := decompose.NewSim(fam, fam, decompose.SimConfig{Seed: 1})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = decompose.Solve(ctx, fam, json.RawMessage(`{"a": "1x"}`), decompose.Config{Models: sims.Models()})
	assert.ErrorIs(t, err, decompose.ErrInput)
	_, err = decompose.Solve(ctx, fam, multiply.Generate(1, 3, 3), decompose.Config{Models: sims.Models(), Settings: decompose.Settings{Target: 1.5}})
	assert.ErrorIs(t, err, decompose.ErrConfig)
	var fe *maker.FieldError
	require.True(t, errors.As(err, &fe))
	assert.Contains(t, err.Error(), "Target")
	_, err = decompose.Solve(ctx, fam, multiply.Generate(1, 3, 3), decompose.Config{Models: map[decompose.Role]llms.Model{}})
	assert.ErrorIs(t, err, decompose.ErrNoModel)
	_, err = decompose.Solve(ctx, panicky{}, multiply.Generate(1, 3, 3), decompose.Config{Models: sims.Models()})
	assert.ErrorIs(t, err, decompose.ErrPanic)

	// A journal of one problem is refused for another, and for other settings.
	path := filepath.Join(t.TempDir(), "j")
	cfg := decompose.Config{Models: sims.Models(), Journal: path, JournalUnsigned: true}
	_, err = decompose.Solve(ctx, fam, multiply.Generate(1, 3, 3), cfg)
	require.NoError(t, err)
	_, err = decompose.Solve(ctx, fam, multiply.Generate(2, 3, 3), cfg)
	assert.ErrorIs(t, err, decompose.ErrJournalMismatch)
	cfg.Settings.Seed = 7
	_, err = decompose.Solve(ctx, fam, multiply.Generate(1, 3, 3), cfg)
	assert.ErrorIs(t, err, decompose.ErrJournalMismatch)
	cfg.Settings.Seed = 0
	cfg.Settings.Parallel = 3 // changes no decision: resumed all the same
	res, err := decompose.Solve(ctx, fam, multiply.Generate(1, 3, 3), cfg)
	require.NoError(t, err)
	assert.Equal(t, res.Resumed, res.Roles[decompose.RoleSolve].Decisions+res.Roles[decompose.RoleAtomic].Decisions+
		res.Roles[decompose.RoleDecompose].Decisions+res.Roles[decompose.RoleCompose].Decisions, "a finished journal decides nothing again")
}
