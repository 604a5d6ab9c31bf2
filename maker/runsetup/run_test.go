package runsetup_test

import (
	"errors"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simRun is a Run of the simulated model at seed 7.
func simRun() runsetup.Run {
	r := runsetup.Run{Models: []string{"sim"}, Settings: runsetup.DefaultSettings(), Sim: sim.DefaultConfig()}
	r.Sim.Seed = 7
	return r
}

// TestRunOpensItsModelsAtTheSeedGiven: the simulated model opens at the
// seed given, the escalation model at Sim.Seed+1, and a batch's jobs
// each at their own seed.
func TestRunOpensItsModelsAtTheSeedGiven(t *testing.T) {
	r := simRun()
	m, err := r.OpenModels(hanoi.Oracle{}, 3)
	require.NoError(t, err)
	assert.Contains(t, maker.ModelIdentity(m), "sim seed=3 ")

	esc, err := r.OpenEscalation(hanoi.Oracle{})
	require.NoError(t, err)
	assert.Nil(t, esc, "no escalation model without Settings.Model")
	r.Settings.Model = "sim"
	esc, err = r.OpenEscalation(hanoi.Oracle{})
	require.NoError(t, err)
	assert.Contains(t, maker.ModelIdentity(esc), "sim seed=8 ")

	open, err := r.JobModels()
	require.NoError(t, err)
	m, err = open(batch.Job{}, hanoi.Oracle{}, 11)
	require.NoError(t, err)
	assert.Contains(t, maker.ModelIdentity(m), "sim seed=11 ")

	route, err := r.Route(hanoi.Oracle{})
	require.NoError(t, err)
	assert.Contains(t, route, "sim seed=7 ", "the simulated model's route is its identity")
	route, err = r.With("openai:gpt-4o-mini").Route(nil)
	require.NoError(t, err)
	assert.Equal(t, "openai:gpt-4o-mini", route)
}

// TestRunPricesARealModelOnlyWhenGiven: a price given replaces the
// model's list price (a 0 too); one not given leaves it.
func TestRunPricesARealModelOnlyWhenGiven(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	r := simRun()
	r.Models = []string{"openai:gpt-4o-mini"}
	price := func(r runsetup.Run) maker.Price {
		open, err := r.JobModels() // a real model: opened once, shared
		require.NoError(t, err)
		m, err := open(batch.Job{}, nil, 0)
		require.NoError(t, err)
		p, ok := m.(maker.Priced)
		require.True(t, ok)
		return p.Price()
	}
	list := price(r)
	assert.Positive(t, list.InputPerMillion)
	r.InputPriceGiven = true // at 0
	assert.Equal(t, maker.Price{OutputPerMillion: list.OutputPerMillion}, price(r))
}

// TestRunBudgetAndShown: no budget without a cap; the models shown
// without a password in a ;base= URL.
func TestRunBudgetAndShown(t *testing.T) {
	r := simRun()
	assert.Nil(t, r.Budget())
	r.MaxCost = 2
	require.NotNil(t, r.Budget())
	assert.Equal(t, 2.0, r.Budget().Cap)
	r = r.With("sim", "openai:m;base=http://u:secret@h/v1")
	assert.Equal(t, "sim, openai:m;base=http://h/v1", r.Shown())
}

// TestSolverOpensTheJournalLast: the Solver has the run's models, the
// escalation model in its policy and the budget; the journal opens only
// once the settings pass, and a part that does not open is named.
func TestSolverOpensTheJournalLast(t *testing.T) {
	r := simRun()
	r.Settings.Policy, r.Settings.Model, r.MaxCost = maker.EscalateModel, "sim", 2
	var cfg maker.Config
	r.Settings.Apply(&cfg)
	opened := 0
	open := func() (*journal.Journal, error) { opened++; return nil, nil }
	s, err := r.Solver(cfg, hanoi.Oracle{}, nil, open)
	require.NoError(t, err)
	assert.Contains(t, maker.ModelIdentity(s.Model), "sim seed=7 ")
	assert.Contains(t, maker.ModelIdentity(s.Config.Escalation.Model), "sim seed=8 ")
	assert.NotNil(t, s.Budget)
	assert.Equal(t, 1, opened)

	bad := cfg
	bad.Vote.K = -1
	assert.NoError(t, r.CheckConfig(cfg), "the escalation model stood in for")
	assert.ErrorIs(t, r.CheckConfig(bad), maker.ErrConfig)
	_, err = r.Solver(bad, hanoi.Oracle{}, nil, open)
	assert.ErrorIs(t, err, maker.ErrConfig)
	assert.Equal(t, 1, opened, "no journal for refused settings")

	r.Settings.Model = "nosuch:x"
	_, err = r.Solver(cfg, hanoi.Oracle{}, nil, open)
	var pe *runsetup.PartError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, "Settings.Model", pe.Part)
	assert.ErrorContains(t, pe.Err, "Models: nosuch:x")
}
