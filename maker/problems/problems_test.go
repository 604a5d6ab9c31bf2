package problems_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

type counting struct {
	llms.Model
	calls *atomic.Int64
}

func (c counting) GenerateContent(ctx context.Context, m []llms.MessageContent, o ...llms.CallOption) (*llms.ContentResponse, error) {
	c.calls.Add(1)
	return c.Model.GenerateContent(ctx, m, o...)
}

func (c counting) Call(ctx context.Context, prompt string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, prompt, o...)
}

func TestSolveByNameOnTheSimulatedModel(t *testing.T) {
	var calls atomic.Int64
	res, err := problems.Solve(context.Background(), "multiply", json.RawMessage(`{"a": "99", "b": "123"}`), problems.Options{
		Wrap: func(m llms.Model) llms.Model { return counting{m, &calls} },
	})
	require.NoError(t, err)
	assert.JSONEq(t, `"12177"`, string(res.Answer))
	require.NotNil(t, res.Correct)
	assert.True(t, *res.Correct)
	assert.Equal(t, int64(res.Samples), calls.Load(), "every call went through Wrap and is counted")

	in, err := problems.Generate("sort", 2, 30)
	require.NoError(t, err)
	res, err = problems.Solve(context.Background(), "sort", in, problems.Options{
		Sim: decompose.SimConfig{Seed: 2, Roles: problems.SimRoles(decompose.SimRole{P: 0.95})}})
	require.NoError(t, err)
	assert.True(t, *res.Correct)
	assert.Zero(t, res.Unprotected)
	// Sim's co-failure share reaches the models and the count: every node
	// co-failed, its agreed wrong answer the likely one.
	res, err = problems.Solve(context.Background(), "sort", in, problems.Options{
		Sim: decompose.SimConfig{Seed: 2, Roles: problems.SimRoles(decompose.SimRole{P: 0.95, CoFailure: 1})}})
	if err == nil {
		assert.False(t, *res.Correct)
	}
	require.NotNil(t, res)
	assert.Positive(t, res.Unprotected, "co-failed decisions decided wrong are counted")
}

func TestRefusals(t *testing.T) {
	_, err := problems.Lookup("divide")
	assert.ErrorIs(t, err, problems.ErrFamily)
	assert.ErrorContains(t, err, "multiply or sort")
	_, err = problems.Solve(context.Background(), "divide", nil, problems.Options{})
	assert.ErrorIs(t, err, problems.ErrFamily)
	for _, tc := range []struct {
		name string
		n    int
	}{{"multiply", 0}, {"multiply", 10001}, {"sort", -1}} {
		_, err := problems.Generate(tc.name, 1, tc.n)
		assert.ErrorIs(t, err, decompose.ErrInput, "%s %d", tc.name, tc.n)
	}
	in, err := problems.Generate("multiply", 1, 10000)
	require.NoError(t, err)
	assert.Len(t, in, len(`{"a":"","b":""}`)+20000)
	_, err = problems.Solve(context.Background(), "sort", json.RawMessage(`{"list": ["x"]}`), problems.Options{})
	assert.ErrorIs(t, err, decompose.ErrInput)
	r, err := problems.ParseRole("solve")
	require.NoError(t, err)
	assert.Equal(t, decompose.RoleSolve, r)
	_, err = problems.ParseRole("solver")
	assert.ErrorIs(t, err, decompose.ErrConfig)
}
