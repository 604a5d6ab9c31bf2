package cluster_test

import (
	"os"
	"testing"

	"github.com/mdap-go/mdap/internal/statetest"
)

// TestMain gives the tests a state folder of their own (journal keys and
// chain heads), never the user's. The tests mostly wait on an embedded
// engine's timers (ack waits, leases, redeliveries): about 40 s of CPU
// in 125 s of wall at go test's default -parallel (GOMAXPROCS, 2 on two
// cores), so they run 4 at once. The tests of journal leases and of the
// task queue, bound by one-second leases and a 700 ms wall, stay out of
// t.Parallel: they run first, alone. (4 at once failed at load 29-48
// before the deadlines of the other tests were made to bound only what
// they test; at load 20-40 the package now passes at 4.)
func TestMain(m *testing.M) {
	statetest.WaitingParallel(4)
	os.Exit(statetest.Main(m))
}
