package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the garbage collector's target the maker command runs with
// when GOGC is not set: a run's live heap is a few megabytes (the state,
// the step's samples, the journal's buffer), so collecting at 100% growth
// spends a quarter to a third of the CPU of a simulated sample on GC;
// at 400% the heap stays under a hundred megabytes and the collector
// takes a fraction of that (docs/speed.md).
const gcPercent = 400

// tuneGC sets gcPercent unless the user set GOGC, which always wins.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
