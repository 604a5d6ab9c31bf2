package maker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// SamplesPerCallAuto is the Solver.SamplesPerCall that asks for a wave's
// samples in as few requests as the temperature rule allows, up to
// MaxSamplesPerCall choices each.
const SamplesPerCallAuto = -1

// MaxSamplesPerCall is the most choices one request asks for (OpenAI's
// limit on n).
const MaxSamplesPerCall = 128

// errNoRequest is the error of the samples of a request whose call never
// returned (it panicked); the panic itself is the drawing sample's.
var errNoRequest = errors.New("the request carrying this sample failed before it answered")

// samplesPerCall is the most choices a request of the run asks for: 1
// for an ensemble (its members are separate models) or when
// SamplesPerCall is 0 or 1.
func (s *Solver) samplesPerCall(members int) int {
	switch {
	case members > 1:
		return 1
	case s.SamplesPerCall == SamplesPerCallAuto:
		return MaxSamplesPerCall
	case s.SamplesPerCall > 1:
		return min(s.SamplesPerCall, MaxSamplesPerCall)
	}
	return 1
}

// perCall is the state of several samples per request that lives as long
// as a Solve: the limit and whether the provider was found to ignore n.
type perCall struct {
	limit  int
	single atomic.Bool // the provider returned fewer choices than asked: one sample per call from now on
	// onShort, if set, is told once that the provider ignores n.
	onShort func(got, asked int)
}

// chunk returns the request that serves sample i of the wave in ctx: the
// first index and the number of choices. The wave's indices are cut into
// runs of one temperature (so the first sample, at temperature 0 under
// DefaultTemperature, is a request of its own) and each run into requests
// of at most limit choices. A sample outside a wave, or with one sample
// per call, is a request of its own. Whether the provider honours n is
// the caller's to check.
func (a *microagent) chunk(ctx context.Context, i int) (first, n int) {
	if w, ok := vote.WaveFrom(ctx); ok && a.perCall != nil && a.perCall.limit > 1 {
		return a.chunkOf(w, i)
	}
	return i, 1
}

// chunkOf is chunk with the wave given: the request of wave w that
// serves sample i, for an agent with several samples per call (perCall
// set). A sample outside the wave is a request of its own (one past its
// end falls through the loop).
func (a *microagent) chunkOf(w vote.Wave, i int) (first, n int) {
	pc := a.perCall
	if i < w.First {
		return i, 1
	}
	end := w.First + w.N
	for start := w.First; start < end; {
		t := a.temperature(start)
		stop := start + 1
		for stop < end && stop-start < pc.limit && a.temperature(stop) == t {
			stop++
		}
		if i < stop {
			return start, stop - start
		}
		start = stop
	}
	return i, 1
}

// waveDraw serves one step's samples, several per request when the
// microagent allows: the first sample of a request to be drawn makes the
// request, the others wait for it and take their choice. Each index gets
// exactly one sample: its choice of the request, or, when the provider
// returned fewer choices than asked, a call of its own (and from then on
// every sample of the run is a call of its own). Safe for concurrent use.
type waveDraw struct {
	agent *microagent
	step  int
	msgs  []llms.MessageContent
	mu    sync.Mutex
	calls map[int]*request // by first index
}

// request is one call for several samples; done is closed once it is set.
type request struct {
	done    chan struct{}
	replies []Reply // without the request's input tokens
	took    time.Duration
	err     error
}

func (a *microagent) wave(step int, msgs []llms.MessageContent) *waveDraw {
	return &waveDraw{agent: a, step: step, msgs: msgs}
}

// sample draws sample i of the step, in the request of the wave in ctx
// that serves it (microagent.chunk).
func (d *waveDraw) sample(ctx context.Context, i int) (Reply, time.Duration, error) {
	first, n := d.agent.chunk(ctx, i)
	return d.sampleIn(ctx, i, first, n)
}

// sampleIn draws sample i of the step as a choice of the request of n
// choices from index first (n <= 1: a call of its own). A sample that is
// not the request's first to be drawn waits for the request the first
// makes: the caller must see that the request's maker is drawn (on
// another goroutine, or earlier on this one).
func (d *waveDraw) sampleIn(ctx context.Context, i, first, n int) (Reply, time.Duration, error) {
	if n <= 1 {
		return d.agent.sample(ctx, SampleID{Step: d.step, Index: i}, d.msgs)
	}
	d.mu.Lock()
	req, ok := d.calls[first]
	if !ok && d.agent.perCall.single.Load() {
		// The provider ignores n: a call of its own (a request made
		// before that was known still serves the samples it carried).
		d.mu.Unlock()
		return d.agent.sample(ctx, SampleID{Step: d.step, Index: i}, d.msgs)
	}
	if !ok {
		if d.calls == nil {
			d.calls = make(map[int]*request, 2)
		}
		req = &request{done: make(chan struct{}), err: errNoRequest}
		d.calls[first] = req
	}
	d.mu.Unlock()
	var head Reply // the request's input tokens and count, the drawing sample's
	if !ok {
		func() {
			defer close(req.done) // also if the call panics: the others fail with errNoRequest
			replies, took, err := d.agent.call(ctx, SampleID{Step: d.step, Index: first}, d.msgs, n)
			if err == nil {
				// The sample that made the request carries its input
				// tokens and count (its choice may be another's): a
				// waiting sample may give up, the drawing one never does.
				head = replies[0]
				replies[0].InputTokens, replies[0].cachedIn, replies[0].cacheWrite, replies[0].requests = 0, 0, 0, 0
			}
			req.replies, req.took, req.err = replies, took, err
		}()
		if req.err == nil && len(req.replies) < n {
			d.agent.short(len(req.replies), n)
		}
	} else {
		select {
		case <-req.done:
		case <-ctx.Done():
			return Reply{}, 0, ctx.Err()
		}
	}
	if req.err != nil {
		if !ok && !errors.Is(req.err, ErrBudget) {
			return Reply{requests: 1}, req.took, req.err // the failed request is this sample's
		}
		return Reply{}, req.took, req.err
	}
	if j := i - first; j < len(req.replies) {
		r := req.replies[j]
		if !ok {
			r.InputTokens, r.cachedIn, r.cacheWrite, r.requests = head.InputTokens, head.cachedIn, head.cacheWrite, 1
		}
		return r, req.took, nil
	}
	if !ok {
		// The drawing sample's own choice is missing (a provider that
		// ignores n answers with the first): it still pays the request.
		r, took, err := d.agent.sample(ctx, SampleID{Step: d.step, Index: i}, d.msgs)
		r.InputTokens += head.InputTokens
		r.cachedIn += head.cachedIn
		r.cacheWrite += head.cacheWrite
		r.requests++
		return r, req.took + took, err
	}
	// The provider gave fewer choices than asked: this sample is a call
	// of its own, with its own identity, so no sample is lost or drawn
	// twice.
	return d.agent.sample(ctx, SampleID{Step: d.step, Index: i}, d.msgs)
}

// short records that the provider answered a request of asked choices
// with got: every later sample of the run is a call of its own.
func (a *microagent) short(got, asked int) {
	pc := a.perCall
	if pc != nil && pc.single.CompareAndSwap(false, true) && pc.onShort != nil {
		pc.onShort(got, asked)
	}
}
