package multiply_test

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// price is a small model's list price, so that runs have a dollar cost.
var price = maker.Price{InputPerMillion: 0.15, OutputPerMillion: 0.6}

// simConfig is every role at p with rivals wrong answers and a share
// cofail of co-failed nodes.
func simConfig(seed uint64, p float64, rivals int, cofail float64) decompose.SimConfig {
	roles := map[decompose.Role]decompose.SimRole{}
	for _, r := range decompose.Roles {
		roles[r] = decompose.SimRole{P: p, Rivals: rivals, CoFailure: cofail}
	}
	return decompose.SimConfig{Seed: seed, Roles: roles}
}

// run solves problem on the sim of sc with settings st (its Price set).
func run(t testing.TB, problem json.RawMessage, sc decompose.SimConfig, st decompose.Settings, journal string) (*decompose.Result, error) {
	t.Helper()
	fam := multiply.Family{}
	sims, err := decompose.NewSim(fam, fam, sc)
	require.NoError(t, err)
	st.Solver.Price = price
	return decompose.Solve(context.Background(), fam, problem,
		decompose.Config{Settings: st, Models: sims.Models(), Truth: fam, CoFailures: sims, Journal: journal, JournalUnsigned: journal != ""})
}

func TestFamilyTruthMultiplies(t *testing.T) {
	t.Parallel()
	fam := multiply.Family{}
	in := multiply.Generate(7, 10, 10)
	assert.Equal(t, in, multiply.Generate(7, 10, 10), "seeded")
	var x multiply.Input
	require.NoError(t, json.Unmarshal(in, &x))
	assert.Len(t, x.A, 10)
	assert.Len(t, x.B, 10)
	right, err := fam.Solve(in)
	require.NoError(t, err)
	ok, err := fam.Check(in, right)
	require.NoError(t, err)
	assert.True(t, ok)
	wrong, err := fam.WrongAnswer(in, right, 3)
	require.NoError(t, err)
	ok, err = fam.Check(in, wrong)
	require.NoError(t, err)
	assert.False(t, ok)
	// The right split composes to the product; every wrong one does not.
	p, err := fam.Split(in)
	require.NoError(t, err)
	compose := func(p decompose.Proposal) json.RawMessage {
		var answers []json.RawMessage
		for _, s := range p.Subproblems {
			a, err := fam.Solve(s)
			require.NoError(t, err)
			answers = append(answers, a)
		}
		c, err := fam.Compose(in, p.Composition, answers)
		require.NoError(t, err)
		return c
	}
	assert.Equal(t, right, compose(p))
	for v := range 12 {
		w, err := fam.WrongSplit(in, v)
		require.NoError(t, err)
		assert.NotEqual(t, right, compose(w), "variant %d", v)
	}
	_, err = fam.Canon(json.RawMessage(`{"a": "12x", "b": "3"}`))
	assert.ErrorIs(t, err, multiply.ErrInput)
	c, err := fam.Canon(json.RawMessage(`{"b": "003", "a": "12"}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":"12","b":"3"}`, string(c))
}

func TestSolveMultipliesExactly(t *testing.T) {
	t.Parallel()
	for _, st := range []decompose.Settings{{}, {Strategy: decompose.StrategyFirstToK}, {Discriminate: true}} {
		res, err := run(t, multiply.Generate(3, 6, 5), simConfig(3, 0.9, 3, 0), st, "")
		require.NoError(t, err, st.Strategy)
		var in multiply.Input
		require.NoError(t, json.Unmarshal(res.Input, &in))
		a, _ := new(big.Int).SetString(in.A, 10)
		b, _ := new(big.Int).SetString(in.B, 10)
		assert.JSONEq(t, `"`+a.Mul(a, b).String()+`"`, string(res.Answer))
		require.NotNil(t, res.Correct)
		assert.True(t, *res.Correct)
		assert.Positive(t, res.Cost)
		sum := 0
		for _, r := range res.Roles {
			sum += r.Samples
		}
		assert.Equal(t, res.Samples, sum)
		if st.Discriminate || st.Strategy == decompose.StrategyFirstToK {
			assert.Positive(t, res.Roles[decompose.RoleDiscriminate].Decisions, st)
		}
	}
}

// Results do not depend on concurrency: one decision at a time and many
// at once, under jittered latency, give the same tree and totals.
func TestResultsDoNotDependOnConcurrency(t *testing.T) {
	t.Parallel()
	for _, strat := range []decompose.Strategy{decompose.StrategyAhead, decompose.StrategyFirstToK} {
		sc := simConfig(11, 0.8, 2, 0)
		sc.Latency = sim.UniformLatency(0, 2e6)
		sc.FlagRate = 0.05
		one, err := run(t, multiply.Generate(11, 5, 5), sc, decompose.Settings{Parallel: 1, Strategy: strat, Discriminate: true}, "")
		require.NoError(t, err)
		many, err := run(t, multiply.Generate(11, 5, 5), sc, decompose.Settings{Parallel: 64, Strategy: strat, Discriminate: true}, "")
		require.NoError(t, err)
		assert.Equal(t, one.Answer, many.Answer)
		assert.Equal(t, one.Samples, many.Samples)
		assert.InDelta(t, one.Cost, many.Cost, 1e-12)
		for r, st := range one.Roles { // costs add in completion order: equal up to rounding
			assert.InDelta(t, st.Cost, many.Roles[r].Cost, 1e-12)
			st.Cost, many.Roles[r].Cost = 0, 0
		}
		assert.Equal(t, one.Roles, many.Roles)
		assert.Equal(t, one.Nodes, many.Nodes)
	}
}

// With the co-failure knob on, the votes cannot protect the co-failed
// nodes, and the report counts them.
func TestCoFailedNodesAreCountedUnprotected(t *testing.T) {
	t.Parallel()
	sc := simConfig(5, 0.9, 3, 0)
	solve := sc.Roles[decompose.RoleSolve]
	solve.CoFailure = 0.2
	sc.Roles[decompose.RoleSolve] = solve
	res, err := run(t, multiply.Generate(5, 6, 6), sc, decompose.Settings{}, "")
	require.NoError(t, err)
	st := res.Roles[decompose.RoleSolve]
	t.Logf("solve: %+v; answer correct %v", *st, *res.Correct)
	assert.Positive(t, st.CoFailed)
	assert.Equal(t, st.CoFailed, st.Unprotected, "at p 0.9 every co-failed node goes to the agreed wrong answer")
	assert.Equal(t, st.Unprotected, st.Wrong, "and the votes protect every other")
	assert.Equal(t, st.Unprotected, res.Unprotected)
	assert.False(t, *res.Correct)
}

// A node at the depth cap is atomic: it is solved without an atomicity
// vote, however large.
func TestDepthCapMakesNodesAtomic(t *testing.T) {
	t.Parallel()
	res, err := run(t, multiply.Generate(8, 4, 4), simConfig(8, 0.9, 3, 0), decompose.Settings{Caps: decompose.Caps{MaxDepth: 1, MaxBreadth: 2}}, "")
	require.NoError(t, err)
	assert.Equal(t, 1, res.Depth)
	assert.Equal(t, 3, res.Nodes)
	assert.Equal(t, 1, res.Roles[decompose.RoleAtomic].Decisions, "the root's only")
	assert.Equal(t, 2, res.Roles[decompose.RoleSolve].Decisions)
	assert.True(t, *res.Correct, "the sim's solver multiplies 4×2 digits as well")
	assert.Equal(t, map[decompose.Role]int{decompose.RoleAtomic: 1, decompose.RoleDecompose: 1, decompose.RoleCompose: 1, decompose.RoleSolve: 3}, res.Plan.Bound)
}
