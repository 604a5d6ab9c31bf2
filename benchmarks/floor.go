package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/tmc/langchaingo/llms"
)

// ErrFloor: the floor program could not finish its run (a malformed reply
// won a step, or the budget ran out): the figure it measured means
// nothing then.
var ErrFloor = errors.New("floor program failed")

// FloorRun is what one run of [Floor] did.
type FloorRun struct {
	Steps, Samples int
	WrongSteps     int
	Solved         bool
	Wall           time.Duration
}

// Floor solves Towers of Hanoi with n disks on the simulated model with
// the least a voted step needs, and nothing a library adds: per step the
// task's messages once, then samples one after another on the calling
// goroutine (the same sim model, called as the solver calls it: the
// sample's identity in the context, the paper's temperatures, the reply
// cap, the seed), each reply hashed (FNV-1a of its text, cut-off replies
// thrown away), an ahead-by-k tally over the hashes, one parse of the
// winning reply (hanoi.ParseReply) and Advance. No journal, no red flags
// beyond the stop reason, no tool intents, no keys of a canonical form, no
// goroutines, no reports. It is the floor the in-process step loop is
// measured against (the overhead suite); it decides each step exactly as
// Solver does with the same model, so the two draw the same samples.
//
// Errors: ErrFloor (wrapped) when a step spends 1000 samples undecided or
// its winner does not parse; the model's errors; ctx.Err().
func Floor(ctx context.Context, n, k int, cfg sim.Config) (FloorRun, error) {
	start := time.Now()
	var run FloorRun
	m, err := sim.New(hanoi.Oracle{}, cfg)
	if err != nil {
		return run, err
	}
	task, err := hanoi.New(n)
	if err != nil {
		return run, err
	}
	votes := make(map[uint64]int, 8)
	firsts := make(map[uint64]string, 8)
	for step := 0; !task.Done(); step++ {
		if err := ctx.Err(); err != nil {
			return run, err
		}
		msgs := task.Messages()
		clear(votes)
		clear(firsts)
		top, second := 0, 0 // the leader's votes and the runner-up's
		var leader uint64
		for i := 0; ; i++ {
			if i == 1000 {
				return run, fmt.Errorf("%w: step %d undecided after 1000 samples", ErrFloor, step)
			}
			temp := 0.1
			if i == 0 {
				temp = 0
			}
			resp, err := m.GenerateContent(maker.WithSampleID(ctx, maker.SampleID{Step: step, Index: i}), msgs,
				llms.WithTemperature(temp), llms.WithMaxTokens(maker.DefaultMaxTokens), llms.WithSeed(i+1))
			run.Samples++
			if err != nil {
				return run, err
			}
			c := resp.Choices[0]
			if c.StopReason == "length" || len(c.Content) > 4*maker.DefaultMaxTokens {
				continue
			}
			h := fnv.New64a()
			_, _ = h.Write([]byte(c.Content))
			key := h.Sum64()
			v := votes[key] + 1
			votes[key] = v
			if v == 1 {
				firsts[key] = c.Content
			}
			if v > top {
				if key != leader {
					second = top
				}
				top, leader = v, key
			} else if v > second {
				second = v
			}
			if top-second >= k {
				break
			}
		}
		a, err := task.Parse(firsts[leader])
		if err != nil {
			return run, fmt.Errorf("%w: step %d: the winner does not parse: %w", ErrFloor, step, err)
		}
		if _, err := task.Advance(a); err != nil {
			return run, err
		}
		run.Steps++
	}
	run.WrongSteps, run.Solved, run.Wall = task.WrongSteps(), task.Solved(), time.Since(start)
	return run, nil
}
