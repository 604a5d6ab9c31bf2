// Package statetest gives a test binary a state folder of its own, so
// that tests which write journals never touch the user's (the journal
// signing key and chain heads live there; see journal.StateDir), and a
// journal store in memory ([MemStore]) for tests of the journal and of the
// step loop alike.
package statetest

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// Env is journal.StateDirEnv, named here because maker's own tests import
// this package.
const Env = "MDAP_STATE_DIR"

// Main runs m with Env set to a new temporary folder, removed afterwards,
// and returns m.Run's exit code. Child processes the tests start inherit
// it. Call it from TestMain: os.Exit(statetest.Main(m)).
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mdap-state-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv(Env, dir); err != nil {
		panic(err)
	}
	return m.Run()
}

// WaitingParallel lets the parallel tests of a package that mostly waits
// (on child processes, an engine's timers, a simulated model's latency)
// run at least n at once, where go test's default, GOMAXPROCS, would keep
// them to 2 on a two-core machine; a -parallel given on the command line
// is kept. Call it from TestMain, before m.Run.
func WaitingParallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
}
