package maker

import (
	"context"
	"errors"
	"fmt"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/maker/journal"
)

// ErrRefused: a Verifier refused a step's winner. The step fails (it
// wraps ErrStep) and nothing of it is applied, run or journaled: the vote
// agreed on an answer that a check outside the vote says is wrong, the
// case votes cannot see (errors that agree).
var ErrRefused = errors.New("the task's check refused the step's winner")

// Verifier is an optional Task extension: a task that can check a
// decided step's winner by a rule or tool of its own, independently of
// the vote (package spec's "checker" is one). The Report counts the
// steps a check verified (Report.Checked) and those only the vote
// decided (Report.VoteOnly), so a run says how much of its result rests
// on votes alone.
type Verifier interface {
	// Verify checks w, the winner of the step the task's Prompt asks
	// now, before its tool intent runs and before it is applied. checked
	// is false when the task has no check for this step: the step is
	// vote-only. A non-nil error refuses the winner: Solve fails the
	// step with an error wrapping ErrRefused and it. It must not change
	// the task, and is called from the goroutine that called Solve.
	Verify(ctx context.Context, w intent.Output) (checked bool, err error)
}

// verify asks the task's Verifier about rec's winner and marks the
// record checked; a panic is ErrTaskPanic.
func (r *run) verify(ctx context.Context, rec *journal.StepRecord) error {
	v, ok := r.task.(Verifier)
	if !ok {
		return nil
	}
	var checked bool
	var err error
	if p := catch.Try(func() { checked, err = v.Verify(ctx, rec.Winner) }); p != nil {
		return fmt.Errorf("%w: step %d: %w: Verify: %w", ErrStep, rec.Step, ErrTaskPanic, p.AsError())
	}
	if err != nil {
		return fmt.Errorf("%w: step %d: %w: %w", ErrStep, rec.Step, ErrRefused, err)
	}
	rec.Checked = checked
	return nil
}
