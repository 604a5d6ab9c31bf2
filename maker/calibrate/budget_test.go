package calibrate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/budget"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestRunStopsAtTheSolversBudget: a Budget on the Solver caps the
// calibration's samples as it caps a run's: Run stops at the first call
// the budget refuses, with ErrBudget (and maker.ErrBudget), having spent
// no more than the cap, and starts no sample after it. With Draw building
// its agent without the budget, every sample is drawn and Run succeeds.
// The same with several samples a request (SamplesPerCall 5: a request
// is reserved at the worst case of all its choices, as in a run).
func TestRunStopsAtTheSolversBudget(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ parallel, perCall int }{{1, 0}, {8, 0}, {1, 5}, {8, 5}} {
		parallel := c.parallel
		cfg := sim.DefaultConfig()
		cfg.Seed, cfg.P = 3, 0.95
		model := numberSim(t, cfg)
		price := maker.Price{InputPerMillion: 1000, OutputPerMillion: 1000}
		// A sample costs about $0.006 and its worst case (prompt + 750
		// tokens) $0.76: the cap allows a few dozen of the 500.
		b := budget.New(1)
		var mu sync.Mutex // Progress is called from the drawing goroutines
		drawn := 0
		rep, err := calibrate.Run(context.Background(), calibrate.Config{
			Steps: numbers{total: 1000}, Solver: &maker.Solver{Config: maker.Config{Price: price, SamplesPerCall: c.perCall}, Model: model, Budget: b},
			StepsSampled: 50, Samples: 10, Parallel: parallel, Progress: func(done, _ int) {
				mu.Lock()
				defer mu.Unlock()
				drawn = max(drawn, done)
			},
		})
		require.ErrorIs(t, err, calibrate.ErrBudget, "parallel %d", parallel)
		require.ErrorIs(t, err, maker.ErrBudget)
		assert.Contains(t, err.Error(), "calibration stopped at its spending cap after")
		assert.LessOrEqual(t, b.Spent(), b.Cap)
		assert.Positive(t, b.Spent())
		assert.Less(t, drawn, 500, "it stopped early")
		assert.Zero(t, rep.All.Samples, "no estimate from a calibration cut short")
	}
}

// jsonModeRecorder records whether each call asked for JSON mode with
// the answer schema in its context.
type jsonModeRecorder struct {
	llms.Model
	calls, structured atomic.Int64
}

func (r *jsonModeRecorder) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	r.calls.Add(1)
	if schema, ok := maker.AnswerSchemaFrom(ctx); ok && len(schema) > 0 && o.JSONMode {
		r.structured.Add(1)
	}
	return r.Model.GenerateContent(ctx, msgs, opts...)
}

// TestRunDrawsStructuredAsTheRun: a Structured solver's calibration
// samples carry JSON mode and the task's answer schema, as the run's
// calls do (before, calibrate refused --structured and Draw sent
// neither).
func TestRunDrawsStructuredAsTheRun(t *testing.T) {
	t.Parallel()
	steps, err := calibrate.Hanoi(5)
	require.NoError(t, err)
	m, err := sim.New(hanoi.Oracle{}, sim.Config{P: 1})
	require.NoError(t, err)
	rec := &jsonModeRecorder{Model: m}
	_, err = calibrate.Run(context.Background(), calibrate.Config{Steps: steps, Solver: &maker.Solver{Config: maker.Config{Structured: true}, Model: rec}, StepsSampled: 5, Samples: 2})
	require.NoError(t, err)
	assert.Equal(t, int64(10), rec.calls.Load())
	assert.Equal(t, int64(10), rec.structured.Load(), "every call structured")

	p, err := (&maker.Solver{Config: maker.Config{Structured: true}, Model: rec}).NewSampler()
	require.NoError(t, err)
	_, err = p.DrawWave(context.Background(), 0, vote.Wave{N: 1}, nil, nil)
	assert.ErrorIs(t, err, maker.ErrNoAnswerSchema, "a Sampler needs the schema in its context")
}
