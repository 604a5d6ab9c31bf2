package maker_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestFirstWaveOfKIsTwoRequests covers docs/cost.md:16-18: under the
// paper's temperature rule "the first sample of a step is a request of its
// own; a first wave of k samples is two requests". With p = 1 every step
// is decided by its first wave, so a run makes exactly two requests a
// step: sample 0 alone at temperature 0, samples 1 to k-1 in one request.
func TestFirstWaveOfKIsTwoRequests(t *testing.T) {
	const k = 4
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 3, 1, 0
	m0, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	m := &recordingModel{Model: m0}
	rep, recs := perCallRun(t, m, maker.SamplesPerCallAuto, vote.Config{K: k})
	require.Len(t, recs, 63)
	assert.Equal(t, 2*len(recs), rep.Usage.Requests, "two requests a step")
	perStep := map[int][]seenRequest{}
	for _, r := range m.reqs {
		perStep[r.id.Step] = append(perStep[r.id.Step], r)
	}
	for step, rs := range perStep {
		require.Len(t, rs, 2, "step %d", step)
		byIndex := map[int]seenRequest{}
		for _, r := range rs {
			byIndex[r.id.Index] = r
		}
		assert.Equal(t, 1, byIndex[0].n, "step %d: sample 0 alone", step)
		assert.Zero(t, byIndex[0].temp, "step %d", step)
		assert.Equal(t, k-1, byIndex[1].n, "step %d: samples 1 to k-1 in one request", step)
		assert.Equal(t, 0.1, byIndex[1].temp, "step %d", step)
	}
}

// errRequestDown is the transient failure failingGroupModel gives.
var errRequestDown = errors.New("request failed")

// failingGroupModel fails the first request for several choices it sees
// and records how many choices that request carried.
type failingGroupModel struct {
	llms.Model
	mu     sync.Mutex
	failed int // choices of the failed request; 0 until it fails
}

func (m *failingGroupModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	m.mu.Lock()
	fail := o.N > 1 && m.failed == 0
	if fail {
		m.failed = o.N
	}
	m.mu.Unlock()
	if fail {
		return nil, errRequestDown
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

// TestFailedRequestFailsEverySampleItCarried covers docs/cost.md:44-45:
// "A failed request fails every sample it carried (counted against
// --max-errors)". One request for n choices fails: the report counts n
// errors, and an error budget of n-1 (vote.Config.MaxErrors) is spent by
// that one request, so the step fails with vote.ErrTooManyErrors.
func TestFailedRequestFailsEverySampleItCarried(t *testing.T) {
	const k = 4
	model := func() *failingGroupModel {
		cfg := sim.DefaultConfig()
		cfg.Seed, cfg.P, cfg.FlagRate = 3, 1, 0
		m, err := sim.New(hanoi.Oracle{}, cfg)
		require.NoError(t, err)
		return &failingGroupModel{Model: m}
	}
	task, err := hanoi.New(3)
	require.NoError(t, err)

	m := model()
	s := &maker.Solver{Model: m, Vote: vote.Config{K: k, MaxErrors: k}, SamplesPerCall: maker.SamplesPerCallAuto}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.True(t, rep.Done)
	require.Equal(t, k-1, m.failed, "the first wave's second request carried k-1 samples")
	assert.Equal(t, m.failed, rep.Errors, "each sample the request carried failed")

	m = model()
	s = &maker.Solver{Model: m, Vote: vote.Config{K: k, MaxErrors: k - 2}, SamplesPerCall: maker.SamplesPerCallAuto}
	task, err = hanoi.New(3)
	require.NoError(t, err)
	_, err = s.Solve(context.Background(), task)
	require.Equal(t, k-1, m.failed)
	assert.ErrorIs(t, err, vote.ErrTooManyErrors, "k-1 failed samples pass a budget of k-2")
	assert.ErrorIs(t, err, errRequestDown)
}
