package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// signalGrace is how long a command has, after SIGINT or SIGTERM, to wind
// down by itself (summary, journals closed); past it the process exits
// with status 130 whatever it is doing (blocked reading stdin, waiting on
// a server's connections), so a signal always ends it within a second.
// Nothing is lost: every journal line and result line is written whole
// before the next, and a kill at any moment resumes.
const signalGrace = 900 * time.Millisecond

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
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-finished:
		return
	case <-t.C:
	}
	fmt.Fprintf(stderr, "maker: interrupted; still busy %s after the signal, so exiting now (journals and results keep every whole line: run the same command again to resume)\n", grace)
	os.Exit(exitAborted)
}
