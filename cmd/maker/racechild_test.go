package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The kill, signal and resume paths run in a child process, where the test
// binary's -race does not reach. Under -race (the default suite, `go test
// -race ./...`) the tests of those paths
// (TestBinarySurvivesKills, TestBinaryInterruptExits130,
// TestBinarySIGKILLMidWaveWithSamplesPerCall, TestBinaryResumeOrStart,
// TestBinarySolveKilledTwiceEndsWithTheUninterruptedResults) start a
// second child, built with -race once, in the background; every other binary
// test keeps the plain child, which is several times faster (all children
// race-built made this package take over 10 minutes on two cores; see
// MDAP_RACE_CHILD in TestMain). A race report in any child fails its test
// (child.wait).

var (
	raceBuilt  = make(chan struct{}) // closed when the race child is built (or failed)
	raceBinary string
	raceErr    error
	raceOut    []byte
)

// buildRaceChild starts building the race-enabled child under -race, in
// the background: most binary tests wait on a model's latency, so the
// build overlaps them instead of adding to the package's time. Called once,
// from TestMain.
func buildRaceChild() {
	if !raceEnabled || binaryRace {
		raceBinary = binary // the plain child, or already race-built
		close(raceBuilt)
		return
	}
	raceBinary = filepath.Join(filepath.Dir(binary), "maker-race")
	go func() {
		defer close(raceBuilt)
		raceOut, raceErr = exec.Command("go", "build", "-race", "-o", raceBinary, ".").CombinedOutput()
	}()
}

// waitRaceChild waits for the build, so TestMain removes its folder after.
func waitRaceChild() { <-raceBuilt }

// raceChild returns the race-built maker binary under -race, and the plain
// one otherwise.
func raceChild(t *testing.T) string {
	t.Helper()
	<-raceBuilt
	require.NoError(t, raceErr, "building the race-enabled maker binary: %s", raceOut)
	return raceBinary
}

// startRace is start with the race-built child (under -race): for the
// tests of the kill, signal and resume paths.
func startRace(t *testing.T, out *os.File, args ...string) *child {
	t.Helper()
	bin := raceChild(t)
	return startBinary(t, bin, raceEnabled, out, args...)
}

// raceExitCode is the exit status of a race-built program that found a
// data race (GORACE's exitcode, whose default this is).
const raceExitCode = 66

// checkRace fails t when a child reported a data race: the report on its
// stderr (printed when the race happens, so also by a child killed
// later), or a race-built child's exit status 66.
func checkRace(t *testing.T, args []string, code int, race bool, stderr string) {
	t.Helper()
	if strings.Contains(stderr, "WARNING: DATA RACE") {
		t.Errorf("maker %v: the race-built child found a data race (exit %d):\n%s", args, code, stderr)
	} else if race && code == raceExitCode {
		t.Errorf("maker %v: exit 66, a race-built child's status after a data race; stderr:\n%s", args, stderr)
	}
}
