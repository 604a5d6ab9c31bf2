package maker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/vote"
)

// Drawn is one sample drawn outside a race (Sampler.DrawWave): the reply, the
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
	// Judgement is the solver's verdict on the reply (Solver.Judge): its
	// red flag, or the answer it votes with and its key; zero when Err is
	// set.
	Judgement
	// Usage is the sample's tokens and the time the call took.
	Usage vote.Usage
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

// draw draws sample i of step from a wave of one agent and judges it.
func (r *run) draw(ctx context.Context, wave *waveDraw, step, i int, tally *modelTally, log *slog.Logger, cancelRace context.CancelCauseFunc) (sm vote.Sample[intent.Output]) {
	reply, took, err := wave.sample(ctx, i)
	sm.Usage = reply.usage(took)
	sm.Voter = reply.Worker
	var reason error
	defer func() {
		model, other := r.ids[i%len(r.ids)], ""
		if wave.agent == r.escAgent && r.escAgent != nil { // an escalated race's other model
			model = r.escIDs[i%len(r.escIDs)]
			other = model
		}
		tally.record(i, sm, reason, other)
		if r.OnSample != nil {
			r.OnSample(SampleEvent{Step: step, Index: i, Model: model, Err: sm.Err, Flag: sm.Flag, Reason: reason, Text: reply.Text, Usage: sm.Usage, Key: sm.Key, Worker: reply.Worker})
		}
	}()
	if err != nil {
		sm.Err = err
		if errors.Is(err, ErrPermanent) {
			cancelRace(err) // no retry can fix it: fail the step now
		}
		return sm
	}
	// A panic in Decode cancels the race with its cause (see above).
	j := judge(reply, r.agent.maxTokens, r.Flags, func(reply Reply) (out intent.Output, key uint64, err error) {
		if rec := catch.Try(func() {
			if keyer, ok := r.task.(VoteKeyer); ok {
				out, key, err = keyer.DecodeKey(reply)
			} else {
				out, err = r.task.Decode(reply)
			}
		}); rec != nil {
			err = fmt.Errorf("%w: Decode: %w", ErrTaskPanic, rec.AsError())
			cancelRace(err)
		}
		return out, key, err
	}, r.normalizer())
	if errors.Is(j.Reason, ErrTaskPanic) {
		sm.Err = j.Reason
		return sm
	}
	if j.Flag != nil {
		sm.Flag, reason = j.Flag, j.Reason
		if log.Enabled(ctx, slog.LevelDebug) {
			log.DebugContext(ctx, "red flag", "step", step, "sample", i, "flag", j.Flag, "reason", j.Reason)
		}
		return sm
	}
	sm.Key = j.Key
	sm.Value = j.Output
	r.rekey(&sm)
	return sm
}
