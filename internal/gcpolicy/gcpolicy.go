// Package gcpolicy is the maker command's garbage-collector policy: a heap
// floor with Go's own GOGC=100 above it.
//
// A voting run on the simulated model allocates a few kilobytes a sample
// and holds a live heap of a few megabytes; at Go's default the collector
// then runs every few megabytes allocated and takes a quarter to a third
// of a sample's CPU. Under this policy the collector lets the heap grow to
// the floor before it collects, while the live heap is small, and behaves
// exactly as GOGC=100 once twice the live heap passes the floor: the heap
// goal is about max(floor, 2 × live). The goal never grows with the live
// heap faster than Go's default does, so memory stays flat in the size of
// a run (a flat live heap gives a flat peak), unlike a larger fixed GOGC,
// which multiplies the live heap.
//
// The policy is applied only when the environment sets neither GOGC nor
// GOMEMLIMIT: a user's choice always wins.
package gcpolicy

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// DefaultFloor is the maker command's heap floor: 32 MiB.
const DefaultFloor = 32 << 20

// percentAbove is the GOGC the policy keeps once the live heap is large:
// Go's default.
const percentAbove = 100

// heapMinimum is the Go runtime's smallest heap goal at GOGC=100 (4 MiB);
// it scales with GOGC, so a GOGC above floor/heapMinimum × 100 would let
// a small heap grow past the floor.
const heapMinimum = 4 << 20

var floor atomic.Uint64 // the installed floor; 0: none

// Apply installs the policy with the given heap floor (bytes), unless
// getenv returns a non-empty GOGC or GOMEMLIMIT, or the floor is zero, or
// a policy is already installed. It reports whether it installed it.
// Once installed, the policy lasts for the process: after every
// collection it sets GOGC (debug.SetGCPercent) from the live heap the
// collection found, never below 100. Cost: a finalizer and a few
// runtime/metrics reads per collection.
func Apply(getenv func(string) string, floorBytes uint64) bool {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" || floorBytes == 0 {
		return false
	}
	if !floor.CompareAndSwap(0, floorBytes) {
		return false
	}
	tune()
	arm()
	return true
}

// Floor returns the installed policy's heap floor in bytes, 0 if none is
// installed.
func Floor() uint64 { return floor.Load() }

// Describe says what the installed policy is, for a report: "" when none
// is installed.
func Describe() string {
	f := Floor()
	if f == 0 {
		return ""
	}
	return fmt.Sprintf("heap floor %d MiB, GOGC %d above it (maker's policy: neither GOGC nor GOMEMLIMIT set)", f>>20, percentAbove)
}

// sentinel is allocated unreachable; its finalizer runs after the
// collection that finds it, tunes, and arms the next one. It holds a
// pointer so that it is never a tiny allocation (which may share a block
// and outlive its cycle).
type sentinel struct {
	p *int //lint:ignore U1000 never read: it only keeps the allocation out of the tiny allocator
}

func arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		tune()
		arm()
	})
}

// metric names read after each collection.
var names = []string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes"}

// tune sets GOGC so that the next heap goal is about the floor, or Go's
// default goal when that is larger. Go's goal is live + (live + stacks +
// globals) × GOGC/100.
func tune() {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	var v [3]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	debug.SetGCPercent(Percent(floor.Load(), v[0], v[0]+v[1]+v[2]))
}

// Percent is the GOGC that makes the heap goal about floorBytes for a
// live heap of live bytes and scannable roots of scan bytes (live +
// stacks + globals): never below 100, and never above floorBytes / 4 MiB
// × 100, the runtime's smallest goal scaled to the floor.
func Percent(floorBytes, live, scan uint64) int {
	most := max(floorBytes*100/heapMinimum, percentAbove)
	if floorBytes <= live {
		return percentAbove
	}
	if scan == 0 {
		return int(most)
	}
	p := (floorBytes - live) * 100 / scan
	return int(min(max(p, percentAbove), most))
}
