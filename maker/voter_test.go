package maker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// namedWorkers labels each choice with a worker, as the engine does,
// chosen by the sample's index.
type namedWorkers struct {
	llms.Model
	name func(index int) string
}

func (m namedWorkers) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := m.Model.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	id, _ := maker.SampleIDFrom(ctx)
	for _, c := range resp.Choices {
		if c.GenerationInfo == nil {
			c.GenerationInfo = map[string]any{}
		}
		c.GenerationInfo[maker.WorkerInfoKey] = m.name(id.Index)
	}
	return resp, nil
}

// TestMinVotersCountsReplyWorkers: the worker a model names under
// WorkerInfoKey is the sample's voter, so that vote.Config.MinVoters
// counts workers: one worker alone cannot decide a step under MinVoters
// 2, two taking turns can.
func TestMinVotersCountsReplyWorkers(t *testing.T) {
	solve := func(name func(int) string) (maker.Report, error) {
		task, err := hanoi.New(3)
		require.NoError(t, err)
		s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2, MaxSamples: 12, MinVoters: 2}}, Model: namedWorkers{simModel(t, 5, 0.95), name}}
		return s.Solve(context.Background(), task)
	}
	rep, err := solve(func(i int) string { return fmt.Sprintf("w%d", i%2) })
	require.NoError(t, err)
	assert.Equal(t, 7, rep.Steps)
	// The sample events carry each voting sample's worker and key.
	var mu sync.Mutex
	workers := map[string]bool{}
	task, err := hanoi.New(2)
	require.NoError(t, err)
	s := &maker.Solver{
		Config: maker.Config{Vote: vote.Config{K: 2, MinVoters: 2}},
		Model:  namedWorkers{simModel(t, 5, 0.95), func(i int) string { return fmt.Sprintf("w%d", i%2) }},
		OnSample: func(e maker.SampleEvent) {
			mu.Lock()
			defer mu.Unlock()
			if e.Flag == nil && e.Err == nil {
				assert.NotZero(t, e.Key)
				workers[e.Worker] = true
			}
		},
	}
	_, err = s.Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"w0": true, "w1": true}, workers)

	_, err = solve(func(int) string { return "solo" })
	require.ErrorIs(t, err, vote.ErrUndecided)
	assert.Contains(t, err.Error(), "1 distinct voters, 2 needed")
}
