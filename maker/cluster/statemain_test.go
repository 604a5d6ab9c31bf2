package cluster_test

import (
	"os"
	"testing"

	"github.com/mdap-go/mdap/internal/statetest"
)

// TestMain gives the tests a state folder of their own (journal keys and
// chain heads), never the user's, and runs 4 at once: they mostly wait
// on an embedded engine's timers (ack waits, leases, redeliveries).
func TestMain(m *testing.M) {
	statetest.WaitingParallel(4)
	os.Exit(statetest.Main(m))
}
