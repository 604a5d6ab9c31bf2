package multiply_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// countingModel counts the calls it answers; with garble it answers
// every call with text that is no role's reply (a red flag), so the
// decision it plays cannot be made.
type countingModel struct {
	llms.Model
	calls  *atomic.Int64
	garble bool
}

func (m countingModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	m.calls.Add(1)
	if m.garble {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "once upon a time there was a number",
			GenerationInfo: map[string]any{"PromptTokens": 40, "CompletionTokens": 9}}}}, nil
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

// A decision that fails still spent its samples: the Result counts every
// call the models answered, and their cost, whichever way it is voted.
func TestResultCountsAFailedDecisionsSamples(t *testing.T) {
	t.Parallel()
	fam := multiply.Family{}
	for _, c := range []struct {
		name string
		st   decompose.Settings
	}{
		{"ahead", decompose.Settings{}},
		{"first-to-k", decompose.Settings{Strategy: decompose.StrategyFirstToK}},
		{"discriminate", decompose.Settings{Discriminate: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sims, err := decompose.NewSim(fam, fam, simConfig(3, 0.95, 3, 0))
			require.NoError(t, err)
			var calls atomic.Int64
			ms := map[decompose.Role]llms.Model{}
			for r, m := range sims.Models() {
				ms[r] = countingModel{Model: m, calls: &calls, garble: r == decompose.RoleCompose}
			}
			st := c.st
			st.Solver.Price = price
			st.Solver.Vote.MaxSamples = 12
			st.Parallel = 1 // one decision at a time: the first that fails ends the run, none is cut short
			res, err := decompose.Solve(context.Background(), fam, multiply.Generate(2, 4, 4), decompose.Config{Settings: st, Models: ms})
			require.ErrorIs(t, err, decompose.ErrDecision)
			require.NotNil(t, res)
			comp := res.Roles[decompose.RoleCompose]
			assert.GreaterOrEqual(t, comp.Failed, 1, "the compose decision that failed (a sibling may have begun before the run ended)")
			assert.Equal(t, 0, comp.Decisions)
			assert.GreaterOrEqual(t, comp.Samples, 12, "its samples are counted")
			assert.Greater(t, comp.Cost, 0.0, "and their cost")
			assert.Equal(t, int(calls.Load()), res.Samples, "every call the models answered is a counted sample")
			sum := 0.0
			for _, st := range res.Roles {
				sum += st.Cost
			}
			assert.InDelta(t, sum, res.Cost, 1e-12)
		})
	}
}
