package benchmarks

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWriteDecomposeReport writes the decompose suite's report at a
// reduced size into results/decompose when MDAP_DECOMPOSE_REPORT is the
// number of multiplication problems per cell (a quarter of that many
// sorts of 500): a run that fits a busy machine, where the full suite
// (maker bench --suite decompose: 200 and 50) does not. The report says
// how many problems each cell ran.
func TestWriteDecomposeReport(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("MDAP_DECOMPOSE_REPORT"))
	if err != nil {
		t.Skip("set MDAP_DECOMPOSE_REPORT=N to write results/decompose at N multiplications per cell")
	}
	sz := decomposeSizes(false)
	for i := range sz.cells { // the full suite's 200 multiplications and 50 sorts, scaled
		sz.cells[i].n = max(sz.cells[i].n*n/200, 1)
	}
	start := time.Now()
	res, err := runDecomposeSized(context.Background(), 1, sz, func() {})
	require.NoError(t, err)
	rep := &Report{Command: "MDAP_DECOMPOSE_REPORT=" + strconv.Itoa(n) + " go test -run TestWriteDecomposeReport ./benchmarks", Seed: 1, Started: start,
		SuiteWall: map[string]string{"decompose": time.Since(start).Round(100 * time.Millisecond).String()}, Decompose: res}
	rep.Machine = machine()
	rep.Wall = time.Since(start)
	rep.Machine.LoadAfter = loadavg()
	require.NoError(t, rep.WriteDir("results/decompose"))
}
