// Package httpboundtest helps the tests that flood a bounded server with
// clients: it raises the test process's file-descriptor limit, sizes the
// flood, and measures file descriptors.
package httpboundtest

import (
	"os"
	"strconv"
	"syscall"
)

// DefaultClients is the size of a flood: 20,000 clients, as the attack
// that found #20 used. MDAP_FLOOD_CLIENTS overrides it.
const DefaultClients = 20000

// Clients returns how many clients a flood test opens: DefaultClients (or
// MDAP_FLOOD_CLIENTS), lowered to what the file-descriptor limit allows
// once raised as far as this process may (each client costs this process
// one descriptor, and the server within it a few more). The second value
// is the limit found.
func Clients() (int, uint64) {
	want := DefaultClients
	if v, err := strconv.Atoi(os.Getenv("MDAP_FLOOD_CLIENTS")); err == nil && v > 0 {
		want = v
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return min(want, 1000), 0
	}
	need := uint64(want) + 1024
	if lim.Cur < need {
		raised := syscall.Rlimit{Cur: need, Max: max(lim.Max, need)}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) != nil {
			raised = syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
			_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised)
		}
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	if lim.Cur < need {
		want = max(int(lim.Cur)-1024, 100)
	}
	return want, lim.Cur
}

// OpenFDs counts this process's open file descriptors (Linux; -1
// elsewhere).
func OpenFDs() int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es)
}
