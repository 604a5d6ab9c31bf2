package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Suites shows benchmark suites' progress on w as m says: a bar per suite
// (On, or Auto on a terminal); a line per finished row (Auto elsewhere: a
// log or CI sees the run advance); nothing (Off, and the callback is nil).
// The callback is benchmarks.Options's Progress: done 0 starts a suite of
// total rows. Call the second function when the suites are done. Both
// functions are safe for concurrent use (a lock orders their writes).
func Suites(w io.Writer, m Mode) (func(suite string, done, total int), func()) {
	switch {
	case m == Off:
		return nil, func() {}
	case m.Shows(w):
		return suiteBars(w)
	}
	var mu sync.Mutex
	start := time.Now()
	return func(suite string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if done == 0 {
			start = time.Now()
			fmt.Fprintf(w, "bench: %s: %d rows\n", suite, total)
			return
		}
		fmt.Fprintf(w, "bench: %s: %d/%d rows, %s\n", suite, done, total, time.Since(start).Round(100*time.Millisecond))
	}, func() {}
}

// suiteBars draws one bar per suite on w.
func suiteBars(w io.Writer) (func(suite string, done, total int), func()) {
	var mu sync.Mutex
	var bar *progressbar.ProgressBar
	current := ""
	return func(suite string, done, total int) {
			mu.Lock()
			defer mu.Unlock()
			if suite != current {
				if bar != nil {
					_ = bar.Finish()
				}
				current = suite
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w),
					progressbar.OptionSetDescription(suite), progressbar.OptionShowCount(),
					progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish())
			}
			_ = bar.Set(done)
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			if bar != nil {
				_ = bar.Finish()
			}
		}
}
