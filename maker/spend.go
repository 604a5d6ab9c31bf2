package maker

import (
	"fmt"

	"github.com/tmc/langchaingo/llms"
)

// ErrBudget: a call was not started because the money spent plus its
// worst case would pass the spending cap (Solver.Budget). It wraps
// ErrPermanent, so the step stops at once; the run ends undecided, its
// decided steps journaled, and resumes with a larger cap.
var ErrBudget = fmt.Errorf("spending cap reached: %w", ErrPermanent)

// Spender is a spending cap a run asks before each request
// (Solver.Budget); maker/budget's Budget is mdap's, shared by the solvers
// of a batch. The step loop calls Reserve with a request's worst case
// (the prompt's estimated tokens, EstimateTokens, as input and max_tokens
// of output for each choice, at the model's Price: Price.WorstCase)
// before it starts; a refusal, an error wrapping ErrBudget, fails the
// sample without a call, and the step stops. When the request answers,
// Settle replaces the reservation by what it cost (its worst case when it
// failed, since a failed request may still be billed). Credit adds what a
// resumed run's replayed steps cost. Methods are called concurrently, from
// the goroutines drawing samples.
type Spender interface {
	Reserve(worst float64) error
	Settle(worst, cost float64)
	Credit(dollars float64)
}

// promptTokens estimates a prompt's input tokens as the budget reserves
// them: EstimateTokens of every text part.
func promptTokens(msgs []llms.MessageContent) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok {
				n += EstimateTokens(t.Text)
			}
		}
	}
	return n
}
