package vote

import "sync"

// Workers keeps the goroutines that run a race's draws between races, so
// that a run of many short races (one a step) does not start a goroutine,
// and grow its stack through the Drawer's calls, for every sample. Give the
// same Workers to every race of a run through Config.Workers, and Close it
// once they have all returned. The zero value is ready to use; Workers is
// safe for concurrent use and must not be copied after first use.
//
// It keeps as many goroutines as were ever busy at once (a race's
// Parallel, or the sum over races run at once): Go hands f to an idle one,
// or starts one when none is idle. Cost: a channel handoff a draw instead
// of a goroutine start; an idle worker is a parked goroutine holding its
// stack until Close.
type Workers struct {
	once  sync.Once
	tasks chan func()
	wg    sync.WaitGroup
}

func (w *Workers) init() { w.once.Do(func() { w.tasks = make(chan func()) }) }

// Go runs f on an idle worker, or on a new one when none is idle; it does
// not wait for f. Go after Close panics.
func (w *Workers) Go(f func()) {
	w.init()
	select {
	case w.tasks <- f:
		return
	default:
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		f()
		for f := range w.tasks {
			f()
		}
	}()
}

// Close ends the idle workers and waits for the busy ones to finish their
// f and end. Call it once, after the last Go.
func (w *Workers) Close() {
	w.init()
	close(w.tasks)
	w.wg.Wait()
}
