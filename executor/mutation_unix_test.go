//go:build unix

package executor

// Tests of mutation_test.go that need a Unix system.

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/intent"
)

// TestReadFileUnderFIFOSwaps: read_file checks the file it opened, not
// only the one it stat'ed: while another goroutine keeps replacing a
// regular file with a named pipe and back, every read gives the regular
// file's content or a not-regular denial, never a pipe read as a file
// (sandbox.go:258, the check after the open; without it a pipe swapped
// in between the stat and the open is read as an empty file). A race:
// the mutant is caught when a swap falls between the two, which on this
// machine happened tens of times in 2,000 swaps.
func TestReadFileUnderFIFOSwaps(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "p")
	require.NoError(t, writeFile(p, "regular\n"))
	e := newExec(t, root)
	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			tmp := filepath.Join(root, "next")
			if i%2 == 0 {
				if !assert.NoError(t, syscall.Mkfifo(tmp, 0o644)) {
					return
				}
			} else if !assert.NoError(t, writeFile(tmp, "regular\n")) {
				return
			}
			if !assert.NoError(t, os.Rename(tmp, p)) {
				return
			}
			swaps.Add(1)
		}
	})
	var ok, denied int
	// Until 2,000 swaps or 5 s, whichever comes first.
reads:
	for start := time.Now(); swaps.Load() < 2000 && time.Since(start) < 5*time.Second; {
		obs := run(t, e, "read_file", args{"path": "p"})
		switch {
		case obs.OK():
			ok++
			if !assert.Equal(t, "regular\n", obs.Content, "a read that succeeded read the regular file") {
				break reads // at the first failure
			}
		case obs.Reason == intent.ReasonNotRegular:
			denied++
		default:
			assert.Failf(t, "unexpected observation", "%+v", obs)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d swaps, %d reads of the file, %d denials of the pipe", swaps.Load(), ok, denied)
}
