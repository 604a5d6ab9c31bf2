package batch

import (
	"fmt"
	"io"
	"time"

	"github.com/mdap-go/mdap/internal/words"
)

// SummaryText is what WriteText says of a batch beside its Summary: its
// tasks file, its results file, where its journals are, and its cap.
type SummaryText struct {
	// TasksFile and Results name the tasks file and the results file.
	TasksFile, Results string
	// Journals says where the journals a resumed step was read from
	// ("in DIR", "on the engine").
	Journals string
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
