package batch

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
)

// ErrInterrupted marks the outcome of a batch stopped before its end by
// its context (a signal): [Summary.Outcome]'s error.
var ErrInterrupted = errors.New("interrupted")

// SummaryText is what WriteText says of a batch beside its Summary: its
// tasks file, its results file, where its journals are, and its cap.
type SummaryText struct {
	// TasksFile and Results name the tasks file and the results file.
	TasksFile, Results string
	// Journals says where the journals a resumed step was read from
	// ("in DIR", "on the engine"); empty when tasks keep none.
	Journals string
	// KeepSteps says how a person keeps an unfinished task's steps when
	// there are no journals ("give --state DIR").
	KeepSteps string
	// Cap is the spending cap in dollars over every run (0: none), shown
	// as CapName does ("--max-cost").
	Cap     float64
	CapName string
}

// WriteText writes s for a person: the tasks by status, the totals, what
// was spent against the cap, the steps replayed and the provider limits'
// counters (the last three only when there is something to say).
func (s Summary) WriteText(w io.Writer, t SummaryText) {
	fmt.Fprintf(w, "solve %s: %s: %d solved, %d failed, %d invalid", t.TasksFile, words.Plural(s.Tasks, "task"), s.Solved, s.Failed, s.Invalid)
	if s.Unfinished > 0 {
		fmt.Fprintf(w, ", %d unfinished", s.Unfinished)
	}
	if s.Skipped > 0 {
		fmt.Fprintf(w, " (%d recorded by an earlier run)", s.Skipped)
	}
	fmt.Fprintf(w, "; results in %s\n", t.Results)
	fmt.Fprintf(w, "steps %d, samples %d, flagged %d, errors %d; tokens in %d, out %d; cost %.4f; wall %s\n",
		s.Steps, s.Samples, s.Flagged, s.Errors, s.InputTokens, s.OutputTokens, s.Cost,
		time.Duration(s.WallSeconds*float64(time.Second)).Round(time.Millisecond))
	if t.Cap > 0 || s.SpentTotal > 0 {
		fmt.Fprintf(w, "spent $%.4f in this run, $%.4f in all runs of the batch", s.Spent, s.SpentTotal)
		if t.Cap > 0 {
			fmt.Fprintf(w, " (%s $%.4f)", t.CapName, t.Cap)
		}
		fmt.Fprintln(w)
	}
	if s.Resumed > 0 {
		fmt.Fprintf(w, "%s replayed from the journals %s\n", words.Plural(s.Resumed, "step"), t.Journals)
	}
	if l := s.Limits; l != nil && (l.RateLimited > 0 || l.Paused > 0) {
		fmt.Fprintf(w, "provider limits: %d rate-limit answers, %d calls retried, %d calls paused, at most %d in flight\n",
			l.RateLimited, l.Retried, l.Paused, l.PeakInFlight)
	}
}

// Outcome is the error a batch's run ends with, saying what was recorded
// and how to finish, given the run's own error (Runner.Run's) and whether
// its context stopped it: nil when every task was solved.
//
// Errors: interrupted, one wrapping [ErrInterrupted] ("interrupted; 3 of
// 10 tasks have results in FILE: run the same command again to finish
// ..."); a spent cap, runErr (wrapping maker.ErrBudget) with the batch's
// spending against t.Cap; another runErr, wrapped with how many tasks
// have results; else tasks not solved, counted by failed and invalid.
func (s Summary) Outcome(runErr error, interrupted bool, t SummaryText) error {
	done := fmt.Sprintf("%d of %s have results in %s", s.Tasks-s.Unfinished, words.Plural(s.Tasks, "task"), t.Results)
	switch {
	case interrupted:
		how := "run the same command again to finish: recorded tasks are skipped"
		if t.Journals != "" {
			how += ", unfinished ones resume from their journals " + t.Journals
		} else {
			how += fmt.Sprintf(", unfinished ones start over (%s to keep their steps)", t.KeepSteps)
		}
		return fmt.Errorf("%w; %s: %s", ErrInterrupted, done, how)
	case errors.Is(runErr, maker.ErrBudget):
		return fmt.Errorf("%w; the batch has spent $%.4f of its %s $%.4f over every run: run the same command with a larger %s to finish (the results written so far are in %s)", runErr, s.SpentTotal, t.CapName, t.Cap, t.CapName, t.Results)
	case runErr != nil:
		return fmt.Errorf("%w; %s: run the same command again to finish", runErr, done)
	case !s.OK():
		return fmt.Errorf("%d of %s not solved (%d failed, %d invalid): see %s", s.Failed+s.Invalid, words.Plural(s.Tasks, "task"), s.Failed, s.Invalid, t.Results)
	}
	return nil
}
