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

// stepWorkers labels each choice with a worker chosen by the sample's
// step and index.
type stepWorkers struct {
	llms.Model
	name func(step, index int) string
}

func (m stepWorkers) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	id, _ := maker.SampleIDFrom(ctx)
	return namedWorkers{m.Model, func(i int) string { return m.name(id.Step, i) }}.GenerateContent(ctx, msgs, opts...)
}

// TestMinVotersFollowsTheWorkers: Solver.MinVoters is asked at each
// step's start, so a run whose second worker leaves after step 3 goes on
// with the one left, where a MinVoters fixed at 2 holds the step for the
// worker that left (undecided at its sample budget).
func TestMinVotersFollowsTheWorkers(t *testing.T) {
	const leaves = 3
	// Two workers take turns until the second leaves before step leaves.
	workers := func(step, i int) string {
		if step >= leaves {
			return "w0"
		}
		return fmt.Sprintf("w%d", i%2)
	}
	solve := func(minVoters func(context.Context) int, steps func()) (maker.Report, error) {
		task, err := hanoi.New(3)
		require.NoError(t, err)
		s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2, MaxSamples: 12, MinVoters: 2}},
			Model: stepWorkers{simModel(t, 5, 0.95), workers}, MinVoters: minVoters,
			Progress: func(maker.Event) { steps() }}
		return s.Solve(context.Background(), task)
	}
	done := 0
	_, err := solve(nil, func() { done++ })
	require.ErrorIs(t, err, vote.ErrUndecided, "MinVoters fixed at 2")
	assert.Equal(t, leaves, done, "held at the first step after the worker left")

	serving, asked := 2, 0
	done = 0
	rep, err := solve(func(context.Context) int { asked++; return serving }, func() {
		if done++; done == leaves {
			serving = 1 // the engine no longer sees the second worker
		}
	})
	require.NoError(t, err)
	assert.Equal(t, 7, rep.Steps)
	assert.Equal(t, 7, asked, "asked once at each step's start")
}

// A MinVoters answer out of range is cut to 1 through vote.MaxVoters,
// never refused mid-run: 0 decides on one worker's word; a huge number
// needs more voters than there are (undecided, naming them).
func TestMinVotersAnswersAreCut(t *testing.T) {
	solve := func(n int) error {
		task, err := hanoi.New(2)
		require.NoError(t, err)
		s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2, MaxSamples: 8}},
			Model: namedWorkers{simModel(t, 5, 0.95), func(int) string { return "solo" }}, MinVoters: func(context.Context) int { return n }}
		_, err = s.Solve(context.Background(), task)
		return err
	}
	require.NoError(t, solve(0))
	err := solve(1 << 30)
	require.ErrorIs(t, err, vote.ErrUndecided)
	assert.Contains(t, err.Error(), fmt.Sprintf("%d needed", vote.MaxVoters))
}
