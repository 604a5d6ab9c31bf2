package journal

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/internal/statetest"
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

// TestJournalOneByteBodyIsJudgedOnItsChain: a line whose body before the
// chain field is one byte (`{` of a sealed `{}`) has a chain field; with
// a chain that fits it is refused as not a journal record, not as a line
// without a chain field (journalchain.go:92, the body's length check).
func TestJournalOneByteBodyIsJudgedOnItsChain(t *testing.T) {
	c := newChain(nil)
	header := c.seal([]byte(fmt.Sprintf(`{"mdap_journal":%d,"run":"%032d","task":"t","settings":{}}`, Version, 7)))
	odd := c.seal([]byte(`{}`))
	require.Len(t, odd, 1+chainSuffixLen)
	_, err := New(&statetest.MemStore{Stored: [][]byte{header, odd}}, Unsigned())
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "mem:2 is not a journal record")
}

// TestJournalKeyEnvOfExactlyTheMinimum: MDAP_JOURNAL_KEY holding
// MinKey bytes keys the chain; one byte fewer is refused
// (journalchain.go:113, the variable's length check).
func TestJournalKeyEnvOfExactlyTheMinimum(t *testing.T) {
	t.Setenv(KeyEnv, strings.Repeat("k", MinKey))
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := Create(path)
	require.NoError(t, err)
	assert.True(t, j.chain.keyed, "the chain is an HMAC under the key")
	require.NoError(t, j.Close())

	t.Setenv(KeyEnv, strings.Repeat("k", MinKey-1))
	_, err = Create(filepath.Join(t.TempDir(), "short.jsonl"))
	require.ErrorIs(t, err, ErrKey)
}

// TestFileStoreLinesFromAnyLine: after the first full pass, Lines(from)
// gives each line from `from` on, numbered, wherever from falls against
// the index of every indexEvery-th line (journalfile.go:131, :132, the
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
// Append buffered to the file and starts its fsync (journalfile.go:193,
// the check of an earlier background failure).
func TestSyncBackgroundWritesTheBufferedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(path)
	require.NoError(t, err)
	s := j.store.(*fileStore)
	require.NoError(t, s.Append([]byte("one line")))
	assert.Empty(t, mustRead(t, path), "buffered")
	require.NoError(t, s.SyncBackground())
	assert.Equal(t, "one line\n", string(mustRead(t, path)))
	s.settle()
	s.mu.Lock()
	started := s.syncing != nil
	s.mu.Unlock()
	assert.True(t, started, "an fsync was started")
	require.NoError(t, j.Close())
}

// TestFailedBackgroundSyncFailsTheNextCall: an fsync started by
// SyncBackground that fails is reported by the store's next call
// (journalfile.go:213, keeping the first failure). The file is closed
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
// fsync failed (journalfile.go:255, the flush before it). The file is
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
// MaxLine bytes (a multiple of the reader's 64 KiB buffer) is read
// whole (journalfile.go:294); the reader stops at the first 64 KiB past
// the maximum (a line just over it is returned, for the journal to
// refuse).
func TestFileStoreReadsALineOfExactlyTheMaximum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lines")
	long := bytes.Repeat([]byte("x"), MaxLine)
	require.NoError(t, os.WriteFile(path, append(append([]byte("a\n"), long...), "\nb\n"...), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var lens []int
	require.NoError(t, (&fileStore{f: f, path: path}).Lines(0, func(_ int, line []byte) error {
		lens = append(lens, len(line))
		return nil
	}))
	assert.Equal(t, []int{1, MaxLine, 1}, lens)

	long = append(long, bytes.Repeat([]byte("x"), 2<<16)...)
	require.NoError(t, os.WriteFile(path, append(append([]byte("a\n"), long...), '\n'), 0o644))
	g, err := os.Open(path)
	require.NoError(t, err)
	defer g.Close()
	err = (&fileStore{f: g, path: path}).Lines(0, func(int, []byte) error { return nil })
	require.ErrorIs(t, err, errLineTooLong)
	assert.Contains(t, err.Error(), "line 2 ")
}

// TestStateKeyMadeOnceUnderARace: processes (here goroutines) making the
// state folder's key at once all end with the same key, the one file.
func TestStateKeyMadeOnceUnderARace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	const n = 8
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[i], errs[i] = stateKey(dir)
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, keys[0], keys[i])
	}
	assert.Len(t, keys[0], 32)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the key alone, no temporary file left")
}

// TestStateKeyFileBounds: a key file of exactly MinKey bytes (in
// hex, with or without a line end) is a key; one a byte shorter, and an
// empty file, are refused as not a journal key, never a panic.
func TestStateKeyFileBounds(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		path := filepath.Join(dir, "k")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}
	min := strings.Repeat("ab", MinKey)
	for _, text := range []string{min, min + "\n", min + "\r\n"} {
		k, err := readKey(write(text))
		require.NoError(t, err, "%q", text)
		assert.Len(t, k, MinKey)
	}
	for _, text := range []string{"", "\n", min[2:]} {
		_, err := readKey(write(text))
		require.ErrorIs(t, err, ErrState, "%q", text)
		assert.Contains(t, err.Error(), "is not a journal key")
	}
}

// BenchmarkJournalChain measures the chain's cost per step line: one
// SHA-256 (or HMAC-SHA256) of a typical 330-byte line.
func BenchmarkJournalChain(b *testing.B) {
	line := []byte(`{"step":1,"k":2,"winner":{"value":{"next":2}},"key":"35bf65b018a96d1c","votes":{"35bf65b018a96d1c":3,"35d369b018ba1cf2":1},"launched":4,"valid":4,"flagged":0,"errors":0,"cancelled":0,"usage":{"input_tokens":40,"output_tokens":17,"latency_ns":3665},"elapsed_ns":21120}`)
	for _, c := range []struct {
		name string
		key  []byte
	}{{"sha256", nil}, {"hmac", []byte("0123456789abcdef0123456789abcdef")}} {
		b.Run(c.name, func(b *testing.B) {
			ch := newChain(c.key)
			buf := make([]byte, 0, len(line)+chainSuffixLen)
			b.ReportAllocs()
			cpuLoop(b, func() { buf = ch.seal(append(buf[:0], line...)) })
		})
	}
}

// TestFileBufferHoldsABatch: a file journal's write buffer holds a batch
// of DefaultSyncEvery 20-disk Hanoi lines (about 450 bytes each), so the
// batch is one write(2).
func TestFileBufferHoldsABatch(t *testing.T) {
	j, err := Create(filepath.Join(t.TempDir(), "j.jsonl"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, j.store.(*fileStore).w.Size(), DefaultSyncEvery*512, "a batch of 20-disk lines fits the buffer")
	require.NoError(t, j.Close())
}
