package journalfile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/internal/statetest"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain gives the tests a state folder of their own (journal keys and
// chain heads), never the user's.
func TestMain(m *testing.M) { os.Exit(statetest.Main(m)) }

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestFileStoreLinesFromAnyLine: after the first full pass, Lines(from)
// gives each line from `from` on, numbered, wherever from falls against
// the index of every indexEvery-th line (file.go:131, :132, the
// index's entry and its line number).
func TestFileStoreLinesFromAnyLine(t *testing.T) {
	const total = 2*indexEvery + 500
	var b strings.Builder
	for i := range total {
		fmt.Fprintf(&b, "line-%d\n", i)
	}
	path := filepath.Join(t.TempDir(), "lines")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	s := &fileStore{f: f, path: path}
	count := 0
	require.NoError(t, s.Lines(0, func(int, []byte) error { count++; return nil }))
	require.Equal(t, total, count)
	require.Len(t, s.index, 3)
	for _, from := range []int{1, indexEvery - 1, indexEvery, indexEvery + 1, 2*indexEvery + 250, total - 1} {
		first, got := -1, 0
		require.NoError(t, s.Lines(from, func(n int, line []byte) error {
			if first < 0 {
				first = n
			}
			assert.Equal(t, fmt.Sprintf("line-%d", n), string(line))
			got++
			return nil
		}))
		assert.Equal(t, from, first, "from %d", from)
		assert.Equal(t, total-from, got, "from %d", from)
	}
}

// TestSyncBackgroundWritesTheBufferedLines: SyncBackground writes what
// Append buffered to the file and starts its fsync (file.go:193,
// the check of an earlier background failure).
func TestSyncBackgroundWritesTheBufferedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	f, err := os.Create(path)
	require.NoError(t, err)
	s := &fileStore{f: f, w: bufio.NewWriter(f), path: path}
	require.NoError(t, s.Append([]byte("one line")))
	assert.Empty(t, mustRead(t, path), "buffered")
	require.NoError(t, s.SyncBackground())
	assert.Equal(t, "one line\n", string(mustRead(t, path)))
	s.settle()
	s.mu.Lock()
	started := s.syncing != nil
	s.mu.Unlock()
	assert.True(t, started, "an fsync was started")
	require.NoError(t, s.Close())
}

// TestFailedBackgroundSyncFailsTheNextCall: an fsync started by
// SyncBackground that fails is reported by the store's next call
// (file.go:213, keeping the first failure). The file is closed
// under the store, so the fsync fails; the buffer is empty, so the
// flush before it has nothing to write.
func TestFailedBackgroundSyncFailsTheNextCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	f, err := os.Create(path)
	require.NoError(t, err)
	s := &fileStore{f: f, w: bufio.NewWriter(f), path: path}
	require.NoError(t, f.Close())
	require.NoError(t, s.SyncBackground())
	s.settle()
	err = s.Flush()
	require.ErrorIs(t, err, os.ErrClosed)
	assert.Contains(t, err.Error(), "sync "+path)
	assert.NoError(t, s.Flush(), "reported once")
}

// TestSyncReportsAFailedFsync: Sync waits for the disk and says when the
// fsync failed (file.go:255, the flush before it). The file is
// closed under the store, the buffer empty.
func TestSyncReportsAFailedFsync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	f, err := os.Create(path)
	require.NoError(t, err)
	s := &fileStore{f: f, w: bufio.NewWriter(f), path: path}
	require.NoError(t, f.Close())
	require.ErrorIs(t, s.Sync(), os.ErrClosed)
}

// TestFileStoreReadsALineOfExactlyTheMaximum: a stored line of
// journal.MaxLine bytes (a multiple of the reader's 64 KiB buffer) is read
// whole (file.go:294); the reader stops at the first 64 KiB past
// the maximum (a line just over it is returned, for the journal to
// refuse).
func TestFileStoreReadsALineOfExactlyTheMaximum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lines")
	long := bytes.Repeat([]byte("x"), journal.MaxLine)
	require.NoError(t, os.WriteFile(path, append(append([]byte("a\n"), long...), "\nb\n"...), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var lens []int
	require.NoError(t, (&fileStore{f: f, path: path}).Lines(0, func(_ int, line []byte) error {
		lens = append(lens, len(line))
		return nil
	}))
	assert.Equal(t, []int{1, journal.MaxLine, 1}, lens)

	long = append(long, bytes.Repeat([]byte("x"), 2<<16)...)
	require.NoError(t, os.WriteFile(path, append(append([]byte("a\n"), long...), '\n'), 0o644))
	g, err := os.Open(path)
	require.NoError(t, err)
	defer g.Close()
	err = (&fileStore{f: g, path: path}).Lines(0, func(int, []byte) error { return nil })
	require.ErrorIs(t, err, errLineTooLong)
	assert.Contains(t, err.Error(), "line 2 ")
}

// TestFileBufferHoldsABatch: a file journal's write buffer holds a batch
// of DefaultSyncEvery 20-disk Hanoi lines (about 450 bytes each), so the
// batch is one write(2).
func TestFileBufferHoldsABatch(t *testing.T) {
	assert.GreaterOrEqual(t, fileBuffer, journal.DefaultSyncEvery*512, "a batch of 20-disk lines fits the buffer")
}
