package cluster_test

import (
	"os"
	"testing"

	"github.com/mdap-go/mdap/internal/statetest"
)

// TestMain gives the tests a state folder of their own (journal keys and
// chain heads), never the user's. The tests mostly wait on an embedded
// engine's timers (ack waits, leases, redeliveries) and run in parallel,
// at go test's default -parallel (GOMAXPROCS): more at once made tests
// bound by two-second deadlines fail on a loaded machine. The tests of
// journal leases and of the task queue, bound by one-second leases and a
// 700 ms wall, stay out of t.Parallel: they run first, alone.
func TestMain(m *testing.M) { os.Exit(statetest.Main(m)) }
