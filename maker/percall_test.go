package maker_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// request is one call a recordingModel saw.
type seenRequest struct {
	id   maker.SampleID
	n    int
	temp float64
	got  int // choices returned
	err  error
	// sent and returned order the calls' starts and ends on one clock.
	sent, returned int
}

// recordingModel passes calls to a model and records each request.
type recordingModel struct {
	llms.Model
	mu    sync.Mutex
	reqs  []seenRequest
	clock int
}

// tick is the next instant of m's clock.
func (m *recordingModel) tick() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clock++
	return m.clock
}

func (m *recordingModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	id, _ := maker.SampleIDFrom(ctx)
	sent := m.tick()
	resp, err := m.Model.GenerateContent(ctx, msgs, opts...)
	got := 0
	if resp != nil {
		got = len(resp.Choices)
	}
	m.mu.Lock()
	m.clock++
	m.reqs = append(m.reqs, seenRequest{id: id, n: max(o.N, 1), temp: o.Temperature, got: got, err: err, sent: sent, returned: m.clock})
	m.mu.Unlock()
	return resp, err
}

// served lists, per step, how many times each sample index was drawn:
// by a choice of a request, counting only the choices that came back.
func (m *recordingModel) served() map[maker.SampleID]int {
	out := map[maker.SampleID]int{}
	for _, r := range m.reqs {
		for j := range r.got {
			out[maker.SampleID{Step: r.id.Step, Index: r.id.Index + j}]++
		}
	}
	return out
}

func perCallSim(t *testing.T, ignoreN bool) *recordingModel {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate, cfg.IgnoreN = 11, 0.8, 0.1, ignoreN
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	return &recordingModel{Model: m}
}

// perCallRun solves 6-disk Hanoi and returns the report and every step's
// record (winner, votes, counts and flags).
func perCallRun(t *testing.T, m llms.Model, perCall int, v vote.Config) (maker.Report, []journal.StepRecord) {
	t.Helper()
	task, err := hanoi.New(6)
	require.NoError(t, err)
	var recs []journal.StepRecord
	s := &maker.Solver{
		Config: maker.Config{Vote: v, SamplesPerCall: perCall},
		Model:  m,
		Progress: func(e maker.Event) {
			r := *e.Record
			r.Usage, r.Elapsed = vote.Usage{}, 0
			recs = append(recs, r)
		},
	}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.True(t, rep.Done)
	return rep, recs
}

// TestSamplesPerCallSameVotesFewerRequests: a wave's samples in few
// requests are the samples one request each would draw (same identities,
// same replies), so every step's winner, votes, counts and flags are the
// same; the requests are fewer, the prompt is billed once a request, the
// first sample of a step is a request of its own at temperature 0, and
// no request asks for more than the limit.
func TestSamplesPerCallSameVotesFewerRequests(t *testing.T) {
	v := vote.Config{K: 3, Parallel: 8, Speculate: 1}
	one := perCallSim(t, false)
	repOne, recsOne := perCallRun(t, one, 1, v)
	seq := perCallSim(t, false)
	_, recsSeq := perCallRun(t, seq, 1, vote.Config{K: 3, Parallel: 1})
	for _, per := range []int{2, maker.SamplesPerCallAuto} {
		m := perCallSim(t, false)
		rep, recs := perCallRun(t, m, per, v)
		require.Len(t, recs, len(recsOne))
		for i := range recs {
			a, b := recs[i], recsOne[i]
			assert.Equal(t, b.Winner, a.Winner, "step %d", i)
			assert.Equal(t, b.Votes, a.Votes, "step %d", i)
			assert.Equal(t, b.Valid, a.Valid, "step %d", i)
			assert.Equal(t, b.Flagged, a.Flagged, "step %d", i)
			assert.Equal(t, b.Flags, a.Flags, "step %d", i)
			assert.Equal(t, recsSeq[i].Winner, a.Winner, "step %d: the sequential run's winner", i)
			assert.Equal(t, recsSeq[i].Votes, a.Votes, "step %d: the sequential run's votes", i)
		}
		assert.Equal(t, len(m.reqs), rep.Usage.Requests, "per %d: the report counts the requests made", per)
		assert.Less(t, rep.Usage.Requests, repOne.Usage.Requests, "per %d: fewer requests", per)
		assert.Less(t, rep.Usage.InputTokens, repOne.Usage.InputTokens, "per %d: the prompt billed once a request", per)
		limit := per
		if per == maker.SamplesPerCallAuto {
			limit = maker.MaxSamplesPerCall
		}
		batched := 0
		for _, r := range m.reqs {
			assert.LessOrEqual(t, r.n, limit)
			if r.id.Index == 0 {
				assert.Equal(t, 1, r.n, "the first sample is a request of its own")
				assert.Zero(t, r.temp)
			}
			if r.n > 1 {
				batched++
				assert.Equal(t, 0.1, r.temp)
				if r.err == nil {
					assert.Equal(t, r.n, r.got)
				}
			}
		}
		assert.Positive(t, batched, "per %d: some requests carry several samples", per)
		// Every sample drawn by exactly one choice; none twice.
		for id, c := range m.served() {
			assert.Equal(t, 1, c, "sample %+v served %d times", id, c)
		}
	}
	assert.Equal(t, len(one.reqs), repOne.Usage.Requests)
	assert.Equal(t, repOne.Launched, repOne.Usage.Requests, "one request per sample")
}

// TestSamplesPerCallProviderIgnoresN: a model that answers one choice
// whatever n says still gives every sample exactly once: the first short
// answer is detected, the samples it left out are calls of their own, and
// so is every later sample; the run is the one-per-call run.
func TestSamplesPerCallProviderIgnoresN(t *testing.T) {
	v := vote.Config{K: 3, Parallel: 8}
	_, recsOne := perCallRun(t, perCallSim(t, false), 1, v)
	m := perCallSim(t, true)
	rep, recs := perCallRun(t, m, maker.SamplesPerCallAuto, v)
	require.Len(t, recs, len(recsOne))
	for i := range recs {
		assert.Equal(t, recsOne[i].Winner, recs[i].Winner, "step %d", i)
		assert.Equal(t, recsOne[i].Votes, recs[i].Votes, "step %d", i)
		assert.Equal(t, recsOne[i].Counts, recs[i].Counts, "step %d", i)
	}
	// The first short answer is the detection. A request asking n > 1
	// sent before it came back is allowed (several may be in flight), and
	// so are a few sent in the moment between the model's return and
	// the solver's reading of it (at most one per place of Parallel: on
	// a loaded machine that moment is long); none after. Without the
	// detection every later request asks n > 1, hundreds in this run.
	detected := 0
	for _, r := range m.reqs {
		if r.got < r.n && (detected == 0 || r.returned < detected) {
			detected = r.returned
		}
	}
	require.NotZero(t, detected, "the provider's short answer was seen")
	var late []seenRequest
	for _, r := range m.reqs {
		if r.n > 1 && r.sent > detected {
			late = append(late, r)
		}
	}
	assert.LessOrEqual(t, len(late), v.Parallel, "n > 1 asked after the provider was seen to ignore n: %+v", late)
	served := m.served()
	assert.Len(t, served, rep.Launched, "every launched sample served")
	for id, c := range served {
		assert.Equal(t, 1, c, "sample %+v served %d times", id, c)
	}
}

// TestSamplesPerCallEnsembleOnePerCall: an ensemble's members are
// separate models, so its samples are never batched.
func TestSamplesPerCallEnsembleOnePerCall(t *testing.T) {
	a, b := perCallSim(t, false), perCallSim(t, false)
	e, err := maker.NewEnsemble(a, b)
	require.NoError(t, err)
	rep, _ := perCallRun(t, e, maker.SamplesPerCallAuto, vote.Config{K: 3, Parallel: 8})
	for _, r := range append(a.reqs, b.reqs...) {
		assert.Equal(t, 1, r.n)
	}
	assert.Equal(t, rep.Launched, len(a.reqs)+len(b.reqs))
}

// TestSamplesPerCallWithTheSimWithoutLatency: the simulated model
// without latency answers at once, yet several samples per request still
// share requests.
func TestSamplesPerCallWithTheSimWithoutLatency(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P = 4, 0.8
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	rep, _ := perCallRun(t, m, maker.SamplesPerCallAuto, vote.Config{K: 3})
	assert.Less(t, rep.Usage.Requests, rep.Launched)
	one, _ := perCallRun(t, m, 1, vote.Config{K: 3})
	assert.Equal(t, one.Launched, one.Usage.Requests)
	assert.Equal(t, one.Valid, rep.Valid)
}
