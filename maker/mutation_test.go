package maker

// Tests written to kill the mutants gremlins found living in this package
// (docs/mutation.md lists each: file:line, mutator, the test that kills it).

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalDefaultWriteEveryWritesSlowSteps: with WriteEvery left at 0
// (DefaultWriteEvery), a step that ends more than DefaultWriteEvery after
// the last write is in the file before the next starts (journal.go:496,
// WriteEvery < 0 meaning "never by time" and 0 meaning the default). The
// last write is moved an hour back after each step instead of waiting.
func TestJournalDefaultWriteEveryWritesSlowSteps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := CreateJournal(path)
	require.NoError(t, err)
	require.Zero(t, j.WriteEvery)
	s := &Solver{Model: &scripted{reply: noisy}, Journal: j, Progress: func(e Event) {
		if e.Step > 0 { // step 0 ended just after the header's write
			assert.Equal(t, e.Step+1, countSteps(t, path), "step %d", e.Step)
		}
		j.written = time.Now().Add(-time.Hour) // as if the next step took an hour
	}}
	_, err = s.Solve(context.Background(), &counter{target: 10})
	require.NoError(t, err)
	require.NoError(t, j.Close())
}
