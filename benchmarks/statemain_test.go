package benchmarks

import (
	"os"
	"testing"

	"github.com/mdap-go/mdap/internal/statetest"
)

// measuringSuite skips t unless MDAP_BENCH_SUITES=1: a test that runs a
// measuring suite (the engine's and the real transports', at 20 ms model
// latency, their CPU read process-wide so they run alone) costs more than
// a minute of the default race-built suite. CI's bench stage runs them,
// not race-built (.ci/run: MDAP_BENCH_SUITES=1 go test -run ... ./benchmarks),
// after `maker bench --quick` runs every suite.
func measuringSuite(t *testing.T) {
	t.Helper()
	if testing.Short() || os.Getenv("MDAP_BENCH_SUITES") != "1" {
		t.Skip("a measuring suite: MDAP_BENCH_SUITES=1 runs it (CI's bench stage does)")
	}
}

// TestMain gives the tests a state folder of their own (journal keys and
// chain heads), never the user's.
func TestMain(m *testing.M) { os.Exit(statetest.Main(m)) }
