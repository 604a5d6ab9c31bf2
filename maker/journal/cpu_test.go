package journal

import (
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// threadCPU returns the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// cpuLoop runs fn b.N times on one locked thread and reports the thread's
// CPU time per call as cpu-ns/op: on a loaded machine ns/op (wall time)
// counts the time other processes ran, this does not.
func cpuLoop(b *testing.B, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := threadCPU()
	n := 0
	for b.Loop() {
		fn()
		n++
	}
	b.ReportMetric(float64(threadCPU()-c0)/float64(n), "cpu-ns/op")
}
