package observe

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
)

// StepActivity tallies the samples of the step being decided, from
// Solver.OnSample, for a progress display: a slow step then shows its
// samples, red flags by reason and errors as they come, rather than
// nothing until it is decided. Its zero value is ready; it is safe for
// concurrent use (OnSample is called from the drawing goroutines).
type StepActivity struct {
	mu                                  sync.Mutex
	step, samples, valid, errors, count int
	flags                               map[string]int
}

// Add counts one sample. A sample of a later step starts the tally over;
// a sample cancelled because its race was already decided is not counted.
// It reports whether e was counted.
func (a *StepActivity) Add(e maker.SampleEvent) bool {
	if errors.Is(e.Err, context.Canceled) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e.Step != a.step || a.count == 0 {
		a.step, a.samples, a.valid, a.errors = e.Step, 0, 0, 0
		a.flags = map[string]int{}
	}
	a.count++
	a.samples++
	switch {
	case e.Err != nil:
		a.errors++
	case e.Flag != nil:
		a.flags[e.Flag.Error()]++
	default:
		a.valid++
	}
	return true
}

// String describes the step being decided: "step 12: 7 samples, 2 valid,
// flagged: cut off 4, unparseable 1, 1 error" (steps counted from 1).
func (a *StepActivity) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "step %d: %s, %d valid", a.step+1, words.Plural(a.samples, "sample"), a.valid)
	if len(a.flags) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(a.flags)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, a.flags[k]))
		}
		fmt.Fprintf(&b, ", flagged: %s", strings.Join(parts, ", "))
	}
	if a.errors > 0 {
		fmt.Fprintf(&b, ", %s", words.Plural(a.errors, "error"))
	}
	return b.String()
}

// SampleLine describes a sample that did not vote, on one line: its
// provider error, or its red flag with the reason (every line of a
// multi-line reason kept, joined by "; ") and the reply's first chars
// characters, quoted, after sec's secrets are redacted from the whole
// reply (a secret cut in two would no longer be found). It is "" for a
// valid sample. A nil sec redacts nothing.
func SampleLine(e maker.SampleEvent, sec *Secrets, chars int) string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("step %d sample %d (%s): error: %v", e.Step, e.Index, e.Model, e.Err)
	case e.Flag == nil:
		return ""
	}
	why := ""
	if e.Reason != nil {
		why = oneLine(e.Reason.Error())
	}
	return fmt.Sprintf("step %d sample %d (%s): red flag %q: %s; %d output tokens: %q", e.Step, e.Index, e.Model, e.Flag.Error(), why, e.Usage.OutputTokens, head(sec.RedactString(e.Text), chars))
}

// oneLine folds a multi-line reason (a JSON Schema validation error lists
// each problem on its own indented line) into one line, every problem
// kept, separated by "; ", so that it shows whole on one line that a
// progress bar does not overwrite.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}

// head returns s's first n characters, with "..." when it is longer.
func head(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
