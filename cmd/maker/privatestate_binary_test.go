package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryRefusesASharedStateFolder: a state folder others may write
// in, where they could remove a journal's head (hiding a rollback) or
// change a run's journal, is refused before anything runs: `maker mcp
// --state` exits 2, a journaled `maker hanoi` with such a MDAP_STATE_DIR
// fails naming the folder and the fix, and leaves no journal.
func TestBinaryRefusesASharedStateFolder(t *testing.T) {
	shared := t.TempDir()
	require.NoError(t, os.Chmod(shared, 0o777))

	c := start(t, nil, "mcp", "--root", t.TempDir(), "--state", shared)
	assert.Equal(t, 2, c.wait(t, time.Minute), c.stderr.String())
	assert.Contains(t, c.stderr.String(), shared)
	assert.Contains(t, c.stderr.String(), "chmod go-w")

	t.Setenv("MDAP_STATE_DIR", shared)
	t.Setenv("MDAP_JOURNAL_KEY", "")
	journal := filepath.Join(t.TempDir(), "run.jsonl")
	c = start(t, nil, "hanoi", "--disks", "3", "--journal", journal)
	code := c.wait(t, time.Minute)
	assert.Equal(t, 2, code)
	assert.Contains(t, c.stderr.String(), "chmod go-w "+shared)
	_, err := os.Stat(journal)
	assert.ErrorIs(t, err, os.ErrNotExist, "no journal begun")
	t.Logf("hanoi exit %d: %s", code, c.stderr.String())
}
