package journal

import (
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
	j, err := New(&statetest.MemStore{})
	require.NoError(t, err)
	assert.True(t, j.chain.keyed, "the chain is an HMAC under the key")
	require.NoError(t, j.Close())

	t.Setenv(KeyEnv, strings.Repeat("k", MinKey-1))
	_, err = New(&statetest.MemStore{})
	require.ErrorIs(t, err, ErrKey)
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
