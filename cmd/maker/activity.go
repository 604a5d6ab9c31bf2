package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/mdap-go/mdap/maker"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mdap-go/mdap/internal/words"
)

// stepActivity tallies the samples of the step being decided, from
// Solver.OnSample, for a progress display: a slow step then shows its
// samples, red flags by reason and errors as they come, rather than
// nothing until it is decided. Its zero value is ready; it is safe for
// concurrent use (OnSample is called from the drawing goroutines).
type stepActivity struct {
	mu                                  sync.Mutex
	step, samples, valid, errors, count int
	flags                               map[string]int
}

// Add counts one sample. A sample of a later step starts the tally over;
// a sample cancelled because its race was already decided is not counted.
// It reports whether e was counted.
func (a *stepActivity) Add(e maker.SampleEvent) bool {
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
func (a *stepActivity) String() string {
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
