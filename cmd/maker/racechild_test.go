package main

import (
	"os"
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
// second, race-built child; every other binary test keeps the plain child,
// which is several times faster (all children race-built made this package
// take over 10 minutes on two cores; see MDAP_RACE_CHILD in TestMain). A
// race report in any child fails its test (child.wait).
//
// The race-built child is this test binary itself, run as maker
// ($MDAP_TEST_AS_MAKER=1: TestMain calls main instead of the tests): the
// same package main, race-built, without a second build and link of the
// command (about 17 s of wall on two loaded cores, which the first of
// these tests waited for). The package's test files come along, but none
// has an init or a flag on the command line's flag set, and maker reads
// neither os.Args[0] nor os.Executable.

var (
	raceBuilt  = make(chan struct{}) // closed when the race child is known (or failed)
	raceBinary string
	raceErr    error
)

// asMakerEnv, set to 1, makes this test binary run as maker: TestMain
// calls main. Every child inherits it; only this test binary reads it.
const asMakerEnv = "MDAP_TEST_AS_MAKER"

// runAsMaker runs maker's main, which exits, when this test binary was
// started as the race-built child (asMakerEnv). Called first in TestMain.
func runAsMaker() {
	if os.Getenv(asMakerEnv) == "1" {
		main()
	}
}

// buildRaceChild readies the race-enabled child under -race: this test
// binary (see asMakerEnv). Called once, from TestMain.
func buildRaceChild() {
	defer close(raceBuilt)
	if !raceEnabled || binaryRace {
		raceBinary = binary // the plain child, or already race-built
		return
	}
	raceBinary, raceErr = os.Executable()
	if raceErr == nil {
		raceErr = os.Setenv(asMakerEnv, "1")
	}
}

// waitRaceChild waits until the race child is known (buildRaceChild).
func waitRaceChild() { <-raceBuilt }

// raceChild returns the race-built maker binary under -race, and the plain
// one otherwise.
func raceChild(t *testing.T) string {
	t.Helper()
	<-raceBuilt
	require.NoError(t, raceErr, "the race-enabled maker binary")
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
