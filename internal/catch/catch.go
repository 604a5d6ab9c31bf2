// Package catch recovers a panic as conc's panics.Catcher recovers it
// (its value and the stack where it was raised), without the Catcher.
//
// panics.Try allocates a Catcher on every call, panic or not; the step
// loop calls task code (Prompt, Decode, Apply) a few times a step, where
// that allocation is a measurable share of the loop's cost. Try here
// allocates only when it recovers a panic.
package catch

import "github.com/sourcegraph/conc/panics"

// Try calls f and returns the panic f raised, recovered as panics.Try
// recovers it (panics.NewRecovered: the value, and the stack from the
// panic), or nil when f returns. A runtime.Goexit in f is not a panic: it
// ends the calling goroutine, as it does through panics.Try.
//
// Cost: a deferred call; no allocation unless f panics.
func Try(f func()) (rec *panics.Recovered) {
	defer func() {
		if v := recover(); v != nil {
			r := panics.NewRecovered(1, v)
			rec = &r
		}
	}()
	f()
	return nil
}
