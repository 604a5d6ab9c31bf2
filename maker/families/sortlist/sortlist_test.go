package sortlist_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/sortlist"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFamilyTruthSorts(t *testing.T) {
	fam := sortlist.Family{}
	in := sortlist.Generate(4, 9)
	assert.Equal(t, in, sortlist.Generate(4, 9), "seeded")
	right, err := fam.Solve(in)
	require.NoError(t, err)
	var l []int64
	require.NoError(t, json.Unmarshal(right, &l))
	assert.Len(t, l, 9)
	assert.True(t, slices.IsSorted(l))
	ok, err := fam.Check(in, right)
	require.NoError(t, err)
	assert.True(t, ok)
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
	p, err := fam.Split(in)
	require.NoError(t, err)
	assert.Equal(t, right, compose(p))
	for v := range 6 {
		w, err := fam.WrongSplit(in, v)
		require.NoError(t, err)
		assert.NotEqual(t, right, compose(w), "variant %d", v)
		a, err := fam.WrongAnswer(in, right, v)
		require.NoError(t, err)
		ok, err := fam.Check(in, a)
		require.NoError(t, err)
		assert.False(t, ok, "wrong answer %d", v)
	}
	_, err = fam.Canon(json.RawMessage(`{"list": [1, "2"]}`))
	assert.ErrorIs(t, err, sortlist.ErrInput)
}

func TestSolveSorts(t *testing.T) {
	fam := sortlist.Family{}
	for _, st := range []decompose.Settings{{}, {Strategy: decompose.StrategyFirstToK}} {
		sims, err := decompose.NewSim(fam, fam, decompose.SimConfig{Seed: 10})
		require.NoError(t, err)
		res, err := decompose.Solve(context.Background(), fam, sortlist.Generate(10, 24),
			decompose.Config{Settings: st, Models: sims.Models(), Truth: fam})
		require.NoError(t, err)
		require.NotNil(t, res.Correct)
		assert.True(t, *res.Correct, st.Strategy)
		assert.Greater(t, res.Nodes, 12)
	}
}
