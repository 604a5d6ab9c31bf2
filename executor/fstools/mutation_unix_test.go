//go:build unix

package fstools

// Tests of mutation_test.go that need a Unix system.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/executor"
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

// TestWriteFileFailedWriteIsAnError: a write that fails part way (here
// past the process's file size limit, RLIMIT_FSIZE, so EFBIG) is an
// error and leaves the old file as it was, not a success that renames a
// cut file into place (builtin_write.go:94 and :97: the Sync and the
// Close must not replace an earlier error). The Go runtime ignores
// SIGXFSZ, so the write returns EFBIG. The limit is a process's, so the
// write runs in a child process of this test binary: in this one it
// also failed the test framework's own writes (its test log, "file too
// large") whenever one fell inside the window.
func TestWriteFileFailedWriteIsAnError(t *testing.T) {
	if root := os.Getenv(fsizeChildEnv); root != "" {
		writePastTheFileSizeLimit(t, root)
		return
	}
	var old syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old))
	if old.Cur < 1<<20 { // RLIM_INFINITY is the largest value
		t.Skipf("the file size limit is already %d", old.Cur)
	}
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "f.txt"), "old\n"))
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileFailedWriteIsAnError$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fsizeChildEnv+"="+root)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestWriteFileFailedWriteIsAnError", "the child ran the write:\n%s", out)
	b, err := os.ReadFile(filepath.Join(root, "f.txt"))
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(b), "the old file is left as it was")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the temporary file is removed")
}

// fsizeChildEnv names the folder the child of
// TestWriteFileFailedWriteIsAnError writes in.
const fsizeChildEnv = "MDAP_TEST_FSIZE_CHILD_ROOT"

// writePastTheFileSizeLimit is the child's part: write_file of 4 KiB
// under a 1 KiB file size limit is an error naming it.
func writePastTheFileSizeLimit(t *testing.T, root string) {
	e := newExec(t, root, executor.WithPolicy(rwPolicy()))
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim))
	lim.Cur = 1 << 10
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim))
	obs, err := e.Execute(context.Background(), intent.ToolIntent{Tool: "write_file", Args: args{"path": "f.txt", "content": strings.Repeat("x", 4<<10)}})
	require.NoError(t, err)
	assert.Equal(t, intent.StatusError, obs.Status, obs.Content)
	assert.Contains(t, obs.Content, "file too large")
}
