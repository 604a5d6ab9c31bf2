// Package progress shows a run's progress on a terminal: a bar of a run's
// steps whose text is the step being decided (its samples, red flags by
// reason and errors) and the dollars spent, with a line per red-flagged
// reply and provider error when asked (Run); a bar of a batch's tasks
// (Batch); a bar of samples restarted for each round of a calibration
// (Rounds); a bar per benchmark suite, or a line per finished row where
// no terminal shows a bar (Suites). Every display is drawn on the writer
// it is given and is safe for concurrent use by the callbacks that feed
// it (a Solver's Progress and OnSample, a batch.Runner's Progress).
//
// A display is chosen by a Mode: Auto draws a bar only on a terminal (a
// log file or a pipe gets none), On always, Off never.
package progress

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Mode says when a bar is drawn.
type Mode string

// The modes; a command's --progress takes their names.
const (
	Auto Mode = "auto" // a bar when the writer is a terminal
	On   Mode = "on"   // always a bar
	Off  Mode = "off"  // no bar
)

// Modes are the names of the modes, for a flag's help and completion.
var Modes = []string{string(Auto), string(On), string(Off)}

// Valid reports whether m is one of Auto, On and Off.
func (m Mode) Valid() bool { return m == Auto || m == On || m == Off }

// Shows reports whether m draws a bar on w: On, or Auto and w a
// terminal.
func (m Mode) Shows(w io.Writer) bool {
	return m == On || m == Auto && IsTerminal(w)
}

// IsTerminal reports whether w, or a writer it wraps (one with an
// Unwrap() io.Writer method, such as observe.RedactWriter's), is a
// terminal.
func IsTerminal(w io.Writer) bool {
	for {
		if file, ok := w.(*os.File); ok {
			return term.IsTerminal(int(file.Fd()))
		}
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// NewBar returns a bar of total units drawn on w, redrawn at most every
// 100 ms and cleared when finished, or nil when m does not show one on w.
func NewBar(w io.Writer, m Mode, total int, unit string) *progressbar.ProgressBar {
	if !m.Shows(w) {
		return nil
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(unit),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionShowDescriptionAtLineEnd(),
	)
}
