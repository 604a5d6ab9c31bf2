package multiply_test

import (
	"context"
	"testing"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/multiply"
	"github.com/stretchr/testify/require"
)

// simConfig is every role at p with rivals wrong answers.
func simConfig(seed uint64, p float64, cofail float64) decompose.SimConfig {
	roles := map[decompose.Role]decompose.SimRole{}
	for _, r := range decompose.Roles {
		roles[r] = decompose.SimRole{P: p, Rivals: 3, CoFailure: cofail}
	}
	return decompose.SimConfig{Seed: seed, Roles: roles}
}

func solve(t testing.TB, seed uint64, n, m int, p float64, st decompose.Settings) *decompose.Result {
	fam := multiply.Family{}
	sims, err := decompose.NewSim(fam, fam, simConfig(seed, p, 0))
	require.NoError(t, err)
	res, err := decompose.Solve(context.Background(), fam, multiply.Generate(seed, n, m),
		decompose.Config{Settings: st, Models: sims.Models(), Truth: fam, CoFailures: sims})
	require.NoError(t, err)
	return res
}

func TestSmoke(t *testing.T) {
	res := solve(t, 1, 4, 3, 0.9, decompose.Settings{})
	t.Logf("%s -> %s correct %v samples %d nodes %d depth %d k %v", res.Input, res.Answer, *res.Correct, res.Samples, res.Nodes, res.Depth, res.Plan.K)
	for r, s := range res.Roles {
		t.Logf("%s %+v", r, *s)
	}
	res = solve(t, 1, 4, 3, 0.9, decompose.Settings{Strategy: decompose.StrategyFirstToK})
	t.Logf("baseline %s correct %v samples %d", res.Answer, *res.Correct, res.Samples)
	res = solve(t, 1, 4, 3, 0.9, decompose.Settings{Discriminate: true})
	t.Logf("disc %s correct %v samples %d", res.Answer, *res.Correct, res.Samples)
}
