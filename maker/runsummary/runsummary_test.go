package runsummary_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/runsummary"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// priced is a model that knows its own price.
type priced struct {
	llms.Model
	price maker.Price
}

func (p priced) Price() maker.Price { return p.price }

func simModel(t *testing.T, seed uint64) llms.Model {
	t.Helper()
	m, err := sim.New(hanoi.Oracle{}, sim.Config{P: 0.9, FlagRate: 0.1, Seed: seed})
	require.NoError(t, err)
	return m
}

func solve(t *testing.T, s *maker.Solver) maker.Report {
	t.Helper()
	task, err := hanoi.New(4)
	require.NoError(t, err)
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	return rep
}

// Of carries the report's figures, prices each member of an ensemble as
// it was charged (its own price, else the Solver's) and gives no p
// estimate without --k auto.
func TestOfAnEnsemble(t *testing.T) {
	t.Parallel()
	own := maker.Price{InputPerMillion: 2, OutputPerMillion: 8}
	base := maker.Price{InputPerMillion: 0.1, OutputPerMillion: 0.4}
	e, err := maker.NewEnsemble(priced{simModel(t, 1), own}, simModel(t, 2))
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2}, Price: base}, Model: e}
	rep := solve(t, s)
	got := runsummary.Of(s, rep)
	assert.Equal(t, rep.Steps, got.Steps)
	assert.Equal(t, rep.Launched, got.Samples)
	assert.Equal(t, rep.Flagged, got.Flagged)
	assert.Equal(t, rep.Usage.OutputTokens, got.OutputTokens)
	assert.Equal(t, rep.Cost, got.Cost)
	assert.Equal(t, rep.SamplesPerStep(), got.SamplesPerStep)
	assert.Nil(t, got.PEstimate, "a fixed k estimates nothing")
	require.Len(t, got.Models, 2)
	assert.Equal(t, own.InputPerMillion, got.Models[0].PriceIn, "the member's own price")
	assert.Equal(t, base.OutputPerMillion, got.Models[1].PriceOut, "else the Solver's")
	sum := 0
	for i, m := range got.Models {
		assert.Equal(t, rep.Models[i].Launched, m.Samples)
		sum += m.Samples
	}
	assert.Equal(t, got.Samples, sum)
}

// A run without red flags still says "flags": {}, and --k auto's run
// gives its estimate of p.
func TestOfAdaptive(t *testing.T) {
	t.Parallel()
	s := &maker.Solver{Config: maker.Config{AdaptiveK: &adaptive.Policy{Target: 0.9, Steps: hanoi.TotalSteps(4)}}, Model: simModel(t, 3)}
	rep := solve(t, s)
	got := runsummary.Of(s, rep)
	require.NotNil(t, got.PEstimate)
	assert.Equal(t, rep.KHistogram, got.KHistogram)
	b, err := json.Marshal(runsummary.Of(s, maker.Report{}))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"flags":{}`)
}
