package maker_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func simModel(t *testing.T, seed uint64, p float64) *sim.Model {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = seed, p, 0.05
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	return m
}

// pricedModel is a simulated model with a price.
type pricedModel struct {
	*sim.Model
	price maker.Price
}

func (p pricedModel) Price() maker.Price { return p.price }

func TestEnsembleReportsEachMember(t *testing.T) {
	a := pricedModel{simModel(t, 1, 0.9), maker.Price{InputPerMillion: 1, OutputPerMillion: 2}}
	b := simModel(t, 2, 0.8)
	ens, err := maker.NewEnsemble(a, b)
	require.NoError(t, err)
	task, err := hanoi.New(6)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}, Price: maker.Price{InputPerMillion: 10, OutputPerMillion: 10}}, Model: ens, Journal: j}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	require.True(t, task.Solved())

	require.Len(t, rep.Models, 2)
	assert.Equal(t, a.Identity(), rep.Models[0].Model)
	assert.Equal(t, b.Identity(), rep.Models[1].Model)
	var sum vote.Counts
	votes, cost := 0, 0.0
	for _, m := range rep.Models {
		assert.Positive(t, m.Launched)
		assert.Positive(t, m.WinnerVotes, "both members voted for winners")
		sum.Launched += m.Launched
		sum.Valid += m.Valid
		sum.Flagged += m.Flagged
		sum.Errors += m.Errors
		sum.Cancelled += m.Cancelled
		votes += m.WinnerVotes
		cost += m.Cost
	}
	assert.Equal(t, rep.Counts, sum, "the members' shares add up to the run")
	assert.GreaterOrEqual(t, votes, 3*rep.Steps, "every step's winner had at least k votes")
	assert.InDelta(t, rep.Cost, cost, 1e-12)
	assert.InDelta(t, a.price.Cost(rep.Models[0].Usage), rep.Models[0].Cost, 1e-12, "a Priced member is costed at its own price")
	assert.InDelta(t, s.Price.Cost(rep.Models[1].Usage), rep.Models[1].Cost, 1e-12, "the others at Solver.Price")

	// A resumed run reports the same shares.
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	again, err := hanoi.New(6)
	require.NoError(t, err)
	s.Journal = j
	rep2, err := s.Solve(context.Background(), again)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, rep.Models, rep2.Models)
}

func TestEnsembleRoutesByIndex(t *testing.T) {
	_, err := maker.NewEnsemble()
	assert.ErrorIs(t, err, maker.ErrConfig)
	_, err = maker.NewEnsemble(nil)
	assert.ErrorIs(t, err, maker.ErrConfig)

	var mu sync.Mutex
	got := map[int]int{} // sample index -> member
	member := func(n int) maker.ModelFunc {
		return func(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
			id, _ := maker.SampleIDFrom(ctx)
			mu.Lock()
			got[id.Index] = n
			mu.Unlock()
			return maker.TextResponse(`{"n": 1}`, "stop"), nil
		}
	}
	ens, err := maker.NewEnsemble(member(0), member(1), member(2))
	require.NoError(t, err)
	for i := range 7 {
		_, err := ens.GenerateContent(maker.WithSampleID(context.Background(), maker.SampleID{Index: i}), nil)
		require.NoError(t, err)
	}
	assert.Equal(t, map[int]int{0: 0, 1: 1, 2: 2, 3: 0, 4: 1, 5: 2, 6: 0}, got)
	assert.Contains(t, ens.Identity(), "ensemble(")
}

func TestOnSampleSeesEverySample(t *testing.T) {
	task, err := hanoi.New(4)
	require.NoError(t, err)
	var mu sync.Mutex
	seen, flagged := 0, 0
	rep, err := (&maker.Solver{Model: simModel(t, 3, 0.9), OnSample: func(e maker.SampleEvent) {
		mu.Lock()
		defer mu.Unlock()
		seen++
		if e.Flag != nil {
			flagged++
			assert.NotNil(t, e.Reason)
		}
	}}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, rep.Launched, seen)
	assert.Equal(t, rep.Flagged, flagged)
}
