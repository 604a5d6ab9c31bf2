package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteWholeOrNotAtAll: a write that fails halfway leaves the older
// file as it was and no temporary file; one that succeeds replaces it
// with the given permissions (less the umask).
func TestWriteWholeOrNotAtAll(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	require.NoError(t, os.WriteFile(path, []byte("older"), 0o644))

	boom := errors.New("disk full")
	err := Write(path, 0o644, func(w io.Writer) error {
		_, _ = w.Write([]byte("half of the ne"))
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), path)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "older", string(got), "a failed write leaves the older file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")

	require.NoError(t, WriteBytes(path, 0o640, []byte("newer")))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "newer", string(got))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&^0o640, "no permission beyond perm")
	assert.NotZero(t, fi.Mode().Perm()&0o600, "the owner reads and writes it")
}

// TestWriteOverAFolderFails: a path that is a folder is not replaced.
func TestWriteOverAFolderFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "REPORT.md")
	require.NoError(t, os.Mkdir(path, 0o755))
	require.Error(t, WriteBytes(path, 0o644, []byte("x")))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
}

// TestWriteIntoAMissingFolderIsErrCreate: nothing to create the file in.
func TestWriteIntoAMissingFolderIsErrCreate(t *testing.T) {
	err := WriteBytes(filepath.Join(t.TempDir(), "no", "such"), 0o644, []byte("x"))
	require.ErrorIs(t, err, ErrCreate)
}
