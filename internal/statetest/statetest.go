// Package statetest gives a test binary a state folder of its own, so
// that tests which write journals never touch the user's (the journal
// signing key and chain heads live there; see maker.StateDir).
package statetest

import (
	"os"
	"testing"
)

// Env is maker.StateDirEnv, named here because maker's own tests import
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
