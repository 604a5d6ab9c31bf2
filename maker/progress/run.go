package progress

import (
	"fmt"
	"io"
	"sync"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/schollz/progressbar/v3"
)

// RunConfig is what a Run shows.
type RunConfig struct {
	// Mode says when the bar of steps is drawn; the zero Mode draws
	// none, as Off.
	Mode Mode
	// Total is the run's number of steps (the bar's length and the
	// forecast's).
	Total int
	// Verbose adds a line for each red-flagged reply (its reason and
	// first VerboseChars characters) and each provider error.
	Verbose bool
	// Secrets are redacted from a reply before it is cut; nil: none.
	Secrets *observe.Secrets
	// Cost, if set, is the dollars a report has spent (Solver.CostOf),
	// shown with the forecast for the whole run (CostLine).
	Cost func(*maker.Report) float64
}

// VerboseChars is how much of a red-flagged reply a verbose Run shows.
const VerboseChars = 80

// Run shows a Solver's run as its samples and steps complete: set the
// Solver's OnSample and Progress to its Hooks; call Finish once Solve
// returns. Its methods are safe for concurrent
// use.
type Run struct {
	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	w       io.Writer
	cfg     RunConfig
	step    observe.StepActivity
	spent   string
	verbose bool
}

// NewRun returns the display of a run on w, or nil when it shows nothing
// (no bar, not verbose).
func NewRun(w io.Writer, cfg RunConfig) *Run {
	r := &Run{bar: NewBar(w, cfg.Mode, cfg.Total, "steps"), w: w, cfg: cfg, verbose: cfg.Verbose}
	if r.bar == nil && !r.verbose {
		return nil
	}
	return r
}

// Hooks are the Solver's OnSample (Sample) and Progress of r: Progress
// only when r draws a bar, else nil; a nil Run's are nil, nil.
func (r *Run) Hooks() (onSample func(maker.SampleEvent), onStep func(maker.Event)) {
	if r == nil {
		return nil, nil
	}
	if r.bar != nil {
		onStep = r.Progress
	}
	return r.Sample, onStep
}

// Sample is the Solver's OnSample: it counts e in the step being decided
// (the bar's text) and, verbose, writes a line for a flagged reply or an
// error. A sample cancelled because its race was decided is not shown.
func (r *Run) Sample(e maker.SampleEvent) {
	if !r.step.Add(e) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if line := observe.SampleLine(e, r.cfg.Secrets, VerboseChars); r.verbose && line != "" {
		if r.bar != nil {
			_ = r.bar.Clear()
		}
		fmt.Fprintf(r.w, "maker: %s\n", line)
	}
	if r.bar != nil {
		r.bar.Describe(r.step.String() + r.spent)
	}
}

// Progress is the Solver's Progress: it moves the bar to the decided
// step and updates the dollars spent. Call it only when r draws a bar
// (Hooks gives it then).
func (r *Run) Progress(e maker.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cfg.Cost != nil {
		r.spent = "; " + CostLine(r.cfg.Cost(e.Report), e.Report.Steps, r.cfg.Total)
	}
	_ = r.bar.Set(e.Step + 1)
}

// Finish ends the bar, if any. A nil Run's Finish does nothing.
func (r *Run) Finish() {
	if r != nil && r.bar != nil {
		_ = r.bar.Finish()
	}
}

// CostLine is the note of dollars spent and the whole run's forecast:
// spent / decided steps * total steps; only the dollars spent while no
// step is decided or the total is unknown.
func CostLine(spent float64, steps, total int) string {
	if steps <= 0 || total <= 0 {
		return fmt.Sprintf("$%.4f", spent)
	}
	return fmt.Sprintf("$%.4f of ~$%.4f", spent, spent/float64(steps)*float64(total))
}
