package vote

import "time"

// Draws run on reused goroutines. A fresh goroutine per draw starts with a
// small stack that a model call (a provider client, a parser, a JSON
// encoder) grows by copying, draw after draw; a worker that has run one
// draw keeps its grown stack for the next. Workers are shared by every
// race in the process and end after workerIdle without work, so an idle
// process holds none.

// workerIdle is how long an idle worker waits for a draw before it ends.
const workerIdle = 50 * time.Millisecond

// work hands a draw to an idle worker. Unbuffered: a send succeeds only
// when a worker is waiting.
var work = make(chan func())

// spawn runs f on an idle worker, or on a new one if none is waiting.
func spawn(f func()) {
	select {
	case work <- f:
	default:
		go worker(f)
	}
}

// worker runs f, then the draws handed to it, until it has been idle for
// workerIdle. A draw that calls runtime.Goexit ends its worker, as it
// would end a goroutine of its own.
func worker(f func()) {
	f()
	f = nil // let the race's state go while idle
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		select {
		case f = <-work:
			f()
			f = nil
			idle.Reset(workerIdle)
		case <-idle.C:
			return
		}
	}
}
