package maker_test

import (
	"context"
	"errors"
	"strings"
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
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: k, MaxErrors: k}, SamplesPerCall: maker.SamplesPerCallAuto}, Model: m}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.True(t, rep.Done)
	require.Equal(t, k-1, m.failed, "the first wave's second request carried k-1 samples")
	assert.Equal(t, m.failed, rep.Errors, "each sample the request carried failed")

	m = model()
	s = &maker.Solver{Config: maker.Config{Vote: vote.Config{K: k, MaxErrors: k - 2}, SamplesPerCall: maker.SamplesPerCallAuto}, Model: m}
	task, err = hanoi.New(3)
	require.NoError(t, err)
	_, err = s.Solve(context.Background(), task)
	require.Equal(t, k-1, m.failed)
	assert.ErrorIs(t, err, vote.ErrTooManyErrors, "k-1 failed samples pass a budget of k-2")
	assert.ErrorIs(t, err, errRequestDown)
}

// billedModel answers a request for several choices as OpenAI bills it:
// the request's totals (promptTokens in, outTotal out) repeated on every
// choice, and choice j padded with 40*j newlines, so the choices differ
// in length but not in meaning.
type billedModel struct {
	llms.Model
	mu   sync.Mutex
	reqs []seenRequest
}

const (
	billedPrompt = 1000
	billedOut    = 600
)

func (m *billedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	id, _ := maker.SampleIDFrom(ctx)
	resp, err := m.Model.GenerateContent(ctx, msgs, opts...)
	if err != nil || o.N <= 1 {
		return resp, err
	}
	for j, c := range resp.Choices {
		c.Content += strings.Repeat("\n", 40*j)
		c.GenerationInfo = map[string]any{"PromptTokens": billedPrompt, "CompletionTokens": billedOut}
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, seenRequest{id: id, n: o.N, got: len(resp.Choices)})
	m.mu.Unlock()
	return resp, nil
}

// TestRequestUsageBookedOnItsSamples covers docs/cost.md:41-43: "A
// request's input tokens are booked on the sample that made it, its output
// tokens shared out by the choices' lengths." For every request of
// several choices: exactly one of its samples carries the prompt's tokens
// and the request count, and the output total is split over its samples
// in proportion to their replies' estimated tokens, adding up to the
// total.
func TestRequestUsageBookedOnItsSamples(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 3, 1, 0
	inner, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	m := &billedModel{Model: inner}
	task, err := hanoi.New(3)
	require.NoError(t, err)
	var mu sync.Mutex
	usage := map[maker.SampleID]vote.Usage{}
	text := map[maker.SampleID]string{}
	s := &maker.Solver{
		Config: maker.Config{Vote: vote.Config{K: 4}, SamplesPerCall: maker.SamplesPerCallAuto},
		Model:  m,
		OnSample: func(e maker.SampleEvent) {
			mu.Lock()
			defer mu.Unlock()
			id := maker.SampleID{Step: e.Step, Index: e.Index}
			usage[id], text[id] = e.Usage, e.Text
		},
	}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.True(t, rep.Done)
	require.NotEmpty(t, m.reqs)
	for _, r := range m.reqs {
		require.Equal(t, 3, r.n, "k = 4: samples 1 to 3 in one request")
		in, requests, out := 0, 0, 0
		est := make([]int, r.n)
		sum := 0
		for j := range r.n {
			id := maker.SampleID{Step: r.id.Step, Index: r.id.Index + j}
			u, ok := usage[id]
			require.True(t, ok, "sample %+v drawn", id)
			in += u.InputTokens
			requests += u.Requests
			out += u.OutputTokens
			if u.InputTokens != 0 {
				assert.Equal(t, billedPrompt, u.InputTokens, "%+v", id)
			}
			est[j] = maker.EstimateReplyTokens(text[id], nil)
			sum += est[j]
		}
		assert.Equal(t, billedPrompt, in, "step %d: the prompt booked once", r.id.Step)
		assert.Equal(t, 1, requests, "step %d: one sample counts the request", r.id.Step)
		assert.Equal(t, billedOut, out, "step %d: the output total shared out, none lost", r.id.Step)
		for j := range r.n - 1 {
			id := maker.SampleID{Step: r.id.Step, Index: r.id.Index + j}
			assert.Equal(t, billedOut*est[j]/sum, usage[id].OutputTokens, "%+v: its share by length", id)
		}
		assert.Less(t, usage[r.id].OutputTokens, usage[maker.SampleID{Step: r.id.Step, Index: r.id.Index + 2}].OutputTokens,
			"step %d: a longer reply books more output", r.id.Step)
	}
}
