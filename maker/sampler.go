package maker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// Sampler draws samples of steps outside a race exactly as Solve's races
// do, and judges them exactly as they do: the same call options (the
// temperature of the index, the reply cap, the per-sample seed, the
// declared tools, CallOptions, and with Structured JSON mode and the
// answer schema, which the context must carry: WithAnswerSchema), the same
// Timeout, Observer and Budget, the sample's identity in the call's
// context (so the simulated model draws what it would in a run), the red
// flags of Flags, the task's decode, and a tool intent normalized by the
// Executor before it is keyed. It sends a wave of a step's samples in the
// requests a run's race sends the same wave (see Config.SamplesPerCall),
// and, like a Solve, remembers for as long as it lives whether the
// provider ignores n, so every index still gets exactly its own sample.
// It is how package maker/calibrate estimates p before a run, and the
// MCP server's sample tool draws. Safe for concurrent use if the model
// and the decode functions are.
type Sampler struct {
	s     *Solver
	agent *microagent // without an answer schema: DrawWave adds the step's
}

// NewSampler returns a Sampler drawing with the solver's settings, built
// by the constructor Solve's races use. Errors: ErrNoModel; the tool
// declaration's. Cost: no model call.
func (s *Solver) NewSampler() (*Sampler, error) {
	if s.Model == nil {
		return nil, ErrNoModel
	}
	agent, err := s.newAgent(nil)
	if err != nil {
		return nil, err
	}
	return &Sampler{s: s, agent: agent}, nil
}

// Requests returns the requests the sampler would send wave w in, each as
// the wave of the indices it carries (First and N), in index order; they
// cover w. One a sample with one sample a request (SamplesPerCall 0 or 1,
// an Ensemble, or once the provider was seen to ignore n). Cost: none.
func (p *Sampler) Requests(w vote.Wave) []vote.Wave {
	var out []vote.Wave
	for i := w.First; i < w.First+w.N; {
		first, n := i, 1
		if p.agent.perCall != nil && !p.agent.perCall.single.Load() {
			first, n = p.agent.chunkOf(w, i)
		}
		out = append(out, vote.Wave{First: first, N: n})
		i = first + n
	}
	return out
}

// DrawWave draws the samples of indices w.First to w.First+w.N-1 of step
// (msgs its prompt) one after another on the calling goroutine, sending
// them in the requests Requests(w) says, and judges each (decode nil:
// DecodeReply): out[j] is sample w.First+j. A request's input tokens (and
// its request count, Usage.Requests 1) are on the sample that made it,
// the others of the request carry none (their Usage.Requests is 0), as in
// a run's report. A request the Budget refuses is a failed sample
// wrapping ErrBudget for each of its samples. A failed call is not an
// error of DrawWave: it is in Drawn.Err, as a race would count it.
// Errors: ErrNoAnswerSchema for a Structured solver without a schema in
// ctx. Cost: one model call a request (more where the provider ignores
// n: a call each for the samples it left out).
func (p *Sampler) DrawWave(ctx context.Context, step int, w vote.Wave, msgs []llms.MessageContent, decode func(Reply) (intent.Output, error)) ([]Drawn, error) {
	s := p.s
	if decode == nil {
		decode = DecodeReply
	}
	agent := p.agent
	if s.Structured {
		// A Sampler has no task: the caller passes its answer schema.
		schema, _ := AnswerSchemaFrom(ctx)
		if len(schema) == 0 {
			return nil, fmt.Errorf("%w: a Structured solver's Sampler takes the task's answer schema from its context (WithAnswerSchema)", ErrNoAnswerSchema)
		}
		a := *agent // the same perCall, single and budget: only the schema differs
		a.schema = json.RawMessage(schema)
		a.fixed = a.fixedOptions()
		agent = &a
	}
	wave := agent.wave(step, msgs)
	out := make([]Drawn, 0, w.N)
	for _, req := range p.Requests(w) {
		// The request's first sample is drawn first, on this goroutine:
		// it makes the request (or, the provider known to ignore n, a
		// call of its own) and the others take their choices of it, so
		// no sample waits for a request no one makes.
		for i := req.First; i < req.First+req.N; i++ {
			reply, took, err := wave.sampleIn(ctx, i, req.First, req.N)
			out = append(out, s.drawn(i, reply, took, err, decode))
		}
	}
	return out, nil
}

// drawn judges sample i's reply (or its failed call) as a race would.
func (s *Solver) drawn(i int, reply Reply, took time.Duration, err error, decode func(Reply) (intent.Output, error)) Drawn {
	d := Drawn{Member: i % len(members(s.Model))}
	d.Usage = reply.usage(took)
	if err != nil {
		d.Err = err
		return d
	}
	d.Reply = reply
	safe := func(r Reply) (out intent.Output, err error) {
		if p := catch.Try(func() { out, err = decode(r) }); p != nil {
			return out, fmt.Errorf("%w: Decode: %w", ErrTaskPanic, p.AsError())
		}
		return out, err
	}
	if j := s.Judge(reply, safe); errors.Is(j.Reason, ErrTaskPanic) {
		d.Err = j.Reason
	} else {
		d.Judgement = j
	}
	return d
}
