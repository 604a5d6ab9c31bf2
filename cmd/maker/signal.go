package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"
)

// signalGrace is how long a command has, after SIGINT or SIGTERM, to wind
// down by itself (summary, journals closed); past it the process exits
// with status 130 whatever it is doing (blocked reading stdin, waiting on
// a server's connections), so a signal always ends it within a second.
// Nothing is lost: the journal's buffered steps are written when the
// command winds down, every result line is written whole before the next,
// and a kill at any moment resumes (the journal's unwritten steps are
// decided again, identically).
const signalGrace = 900 * time.Millisecond

// drainGrace is the time a command promised its work to finish in after a
// signal (maker worker --grace), added to the watchdog's grace.
var drainGrace atomic.Int64

// allowDrain gives the command d more after a signal before the watchdog
// exits the process.
func allowDrain(d time.Duration) { drainGrace.Store(int64(d)) }

// exitAfterSignal exits the process grace after ctx ends (a signal),
// unless the command finishes first: finished is closed when it returns,
// before main's own exit (which may itself take a while: a -race build
// sleeps a second at exit), so a command that ended by itself is never
// cut short here.
func exitAfterSignal(ctx context.Context, finished <-chan struct{}, grace time.Duration, stderr io.Writer) {
	select {
	case <-ctx.Done():
	case <-finished:
		return
	}
	t := time.NewTimer(grace + time.Duration(drainGrace.Load()))
	defer t.Stop()
	select {
	case <-finished:
		return
	case <-t.C:
	}
	fmt.Fprintf(stderr, "maker: interrupted; still busy %s after the signal, so exiting now (journals and results keep every whole line: run the same command again to resume)\n", grace)
	os.Exit(exitAborted)
}
