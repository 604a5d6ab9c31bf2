package progress

import (
	"io"
	"sync"

	"github.com/schollz/progressbar/v3"
)

// Rounds is a bar of samples per round (a calibration's rounds each get
// their own): Start begins a round's bar, Set moves it, Finish ends it.
// It draws nothing when its Mode shows no bar on its writer. Its methods
// are safe for concurrent use.
type Rounds struct {
	w   io.Writer
	m   Mode
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

// NewRounds returns the rounds' bar drawn on w as m says.
func NewRounds(w io.Writer, m Mode) *Rounds { return &Rounds{w: w, m: m} }

// Start ends the current round's bar, if any, and begins one of total
// samples.
func (r *Rounds) Start(total int) {
	r.Finish()
	bar := NewBar(r.w, r.m, total, "samples")
	r.mu.Lock()
	r.bar = bar
	r.mu.Unlock()
}

// Set moves the round's bar to done samples (a calibrate.Config's
// Progress; total is the bar's own).
func (r *Rounds) Set(done, _ int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bar != nil {
		_ = r.bar.Set(done)
	}
}

// Finish ends the round's bar, if any.
func (r *Rounds) Finish() {
	r.mu.Lock()
	bar := r.bar
	r.bar = nil
	r.mu.Unlock()
	if bar != nil {
		_ = bar.Finish()
	}
}
