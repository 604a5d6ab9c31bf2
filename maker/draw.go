package maker

import (
	"context"
	"errors"
	"fmt"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
	"github.com/sourcegraph/conc/panics"
	"github.com/tmc/langchaingo/llms"
)

// Drawn is one sample drawn outside a race (Solver.Draw): the reply, the
// solver's verdict on it and what it cost.
type Drawn struct {
	// Member is the index of the model that drew it: the Ensemble member
	// of the sample's index, or 0 for a single model.
	Member int
	// Reply is the model's reply; zero when Err is set.
	Reply Reply
	// Err is the provider's error (or ErrTaskPanic from decode): the
	// sample failed and would not vote.
	Err error
	// Flag is the red flag (ErrEmpty, ErrCutOff, ErrFormat, ...) when the
	// reply may not vote, and Reason the detailed reason; nil otherwise.
	Flag, Reason error
	// Output and Key are the answer the reply votes with and its vote
	// key, when Err and Flag are nil.
	Output intent.Output
	Key    uint64
	// Usage is the sample's tokens and the time the call took.
	Usage vote.Usage
}

// Draw asks the solver's Model for one sample of a step, exactly as Solve's
// races do, and judges it exactly as they do: the same call options (the
// temperature of id.Index, the reply cap, the per-sample seed, the declared
// tools, CallOptions), the same Timeout, the sample's identity in the
// call's context (so the simulated model draws what it would in a run),
// the red flags of Flags, decode as the task's Decode (nil means
// DecodeReply), and a tool intent normalized by the Executor before it is
// keyed. It is how a sample of any step can be taken on its own, as
// package maker/calibrate does to estimate p before a run.
//
// A failed call is not an error of Draw: it is in Drawn.Err, as a race
// would count it. Errors: ErrNoModel. Safe for concurrent use if the model
// and decode are; cost: one model call.
func (s *Solver) Draw(ctx context.Context, id SampleID, msgs []llms.MessageContent, decode func(Reply) (intent.Output, error)) (Drawn, error) {
	if s.Model == nil {
		return Drawn{}, ErrNoModel
	}
	if decode == nil {
		decode = DecodeReply
	}
	temp := s.Temperature
	if temp == nil {
		temp = DefaultTemperature
	}
	native, toolText, _, err := s.declaration()
	if err != nil {
		return Drawn{}, err
	}
	agent := &microagent{model: s.Model, maxTokens: s.maxTokens(), temperature: temp, tools: native, toolText: toolText, options: s.CallOptions, timeout: s.Timeout}
	d := Drawn{Member: id.Index % len(members(s.Model))}
	reply, took, err := agent.sample(ctx, id, msgs)
	d.Usage = reply.usage(took)
	if err != nil {
		d.Err = err
		return d, nil
	}
	d.Reply = reply
	safe := func(r Reply) (out intent.Output, err error) {
		if p := panics.Try(func() { out, err = decode(r) }); p != nil {
			return out, fmt.Errorf("%w: Decode: %w", ErrTaskPanic, p.AsError())
		}
		return out, err
	}
	out, key, flag, why := judge(reply, agent.maxTokens, s.Flags, safe, s.normalizer())
	switch {
	case errors.Is(why, ErrTaskPanic):
		d.Err = why
	case flag != nil:
		d.Flag, d.Reason = flag, why
	default:
		d.Output, d.Key = out, key
	}
	return d, nil
}

// Key returns the vote key out has in this solver's races: a tool intent
// is first normalized by the Executor, as Solve does with every sample.
// Errors: the executor's refusal of the intent's arguments, or
// intent.Key's.
func (s *Solver) Key(out intent.Output) (uint64, error) {
	if n := s.normalizer(); n != nil && out.Intent != nil {
		ti, err := n(*out.Intent)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrInvalidArguments, err)
		}
		out.Intent = &ti
	}
	return intent.Key(out)
}

func (s *Solver) normalizer() func(intent.ToolIntent) (intent.ToolIntent, error) {
	if s.Executor == nil {
		return nil
	}
	return s.Executor.Normalize
}
