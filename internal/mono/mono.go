// Package mono reads the monotonic clock with one clock read instead of
// time.Now's two.
//
// time.Now reads the wall clock and the monotonic clock (two vDSO calls,
// about 75 ns on the benchmark machine); time.Since of a time that carries
// a monotonic reading reads only the monotonic clock (about 27 ns). The
// step loop times every sample (its call's latency) and every step, where
// the difference is a measurable share of the loop's own cost; it needs
// durations only, never a wall time.
package mono

import "time"

// epoch is the process's start, as this package sees it.
var epoch = time.Now()

// Now returns the monotonic time since an arbitrary fixed moment (the
// package's initialisation): the difference of two readings is the
// monotonic time elapsed between them, as time.Since would measure it,
// and it never decreases. It is not a wall time. Cost: one monotonic clock
// read, no allocation.
func Now() time.Duration { return time.Since(epoch) }

// Since returns the monotonic time elapsed since start, a reading of Now:
// Now() - start. Cost: one clock read.
func Since(start time.Duration) time.Duration { return Now() - start }
