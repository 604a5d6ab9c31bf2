package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// The vote-level suites draw from the simulated model itself, through a
// minimal oracle: the right reply is "R", the wrong reply of variant v is
// "W<v>". So a sample's rightness, its wrong answer and its latency are the
// sim's (seeded per (seed, step, index), with its difficulty per (seed,
// step)), and nothing but the model and the vote is measured.

type stepOracle struct{}

func (stepOracle) Correct(sim.Query) (string, error) { return "R", nil }
func (stepOracle) Wrong(_ sim.Query, v int) (string, error) {
	return "W" + strconv.Itoa(v), nil
}

// stepPrompt is the one prompt of every vote-level step; the step's
// identity is in the sample's context.
var stepPrompt = []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "step")}

// keyOf is a sample's vote key: FNV-1a of the reply, never 0.
func keyOf(text string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(text); i++ {
		h ^= uint64(text[i])
		h *= 1099511628211
	}
	return h | 1
}

// stepModel builds the model of a vote-level experiment: one sim, or an
// ensemble of members sims seeded seed, seed+1, ...
func stepModel(cfg sim.Config, members int) (llms.Model, error) {
	if members <= 1 {
		return sim.New(stepOracle{}, cfg)
	}
	ms := make([]llms.Model, members)
	for i := range ms {
		c := cfg
		c.Seed = cfg.Seed + uint64(i)
		m, err := sim.New(stepOracle{}, c)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	return maker.NewEnsemble(ms...)
}

// drawer returns the Drawer of a vote-level step: sample i of step asks
// model with the sample's identity in its context; the Value is whether
// the reply was right.
func drawer(model llms.Model, step int) vote.Drawer[bool] {
	return func(ctx context.Context, i int) vote.Sample[bool] {
		start := time.Now()
		resp, err := model.GenerateContent(maker.WithSampleID(ctx, maker.SampleID{Step: step, Index: i}), stepPrompt)
		took := time.Since(start)
		if err != nil {
			return vote.Sample[bool]{Err: err, Usage: vote.Usage{Latency: took}}
		}
		text := resp.Choices[0].Content
		if text == "" || (text[0] != 'R' && text[0] != 'W') {
			return vote.Sample[bool]{Flag: errors.New("flagged"), Usage: vote.Usage{Latency: took}}
		}
		return vote.Sample[bool]{Value: text == "R", Key: keyOf(text), Usage: vote.Usage{Latency: took}}
	}
}

// raceStep decides one vote-level step with vote.Race and returns the
// tally and whether the winner was right. The budget is large: a fidelity
// race must end at its barrier, never on a budget.
func raceStep(ctx context.Context, cfg vote.Config, model llms.Model, step int) (vote.Result[bool], error) {
	if cfg.MaxSamples == 0 {
		cfg.MaxSamples = 1 << 20
	}
	res, err := vote.Race(ctx, cfg, drawer(model, step))
	if err != nil {
		return res, fmt.Errorf("benchmarks: step %d: %w", step, err)
	}
	return res, nil
}
