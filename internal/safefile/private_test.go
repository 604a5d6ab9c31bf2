package safefile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrivateDir: a missing folder is made 0700; an existing one of the
// user's own, not writable by others, passes; one writable by group or
// others, or a file, is refused with ErrNotPrivate naming the path and
// the fix.
func TestPrivateDir(t *testing.T) {
	base := t.TempDir()
	made := filepath.Join(base, "a", "b")
	require.NoError(t, safefile.PrivateDir(made))
	fi, err := os.Stat(made)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	readable := filepath.Join(base, "readable")
	require.NoError(t, os.Mkdir(readable, 0o700))
	require.NoError(t, os.Chmod(readable, 0o755))
	assert.NoError(t, safefile.PrivateDir(readable), "read by others, written by none: passes")

	for _, mode := range []os.FileMode{0o777, 0o770, 0o702} {
		shared := filepath.Join(base, "shared"+mode.String())
		require.NoError(t, os.Mkdir(shared, 0o700))
		require.NoError(t, os.Chmod(shared, mode))
		err := safefile.PrivateDir(shared)
		require.ErrorIs(t, err, safefile.ErrNotPrivate, "mode %s", mode)
		assert.Contains(t, err.Error(), shared)
		assert.Contains(t, err.Error(), "chmod go-w")
	}

	if os.Geteuid() == 0 { // only root can give a folder away
		theirs := filepath.Join(base, "theirs")
		require.NoError(t, os.Mkdir(theirs, 0o700))
		require.NoError(t, os.Chown(theirs, 65534, 65534))
		err := safefile.PrivateDir(theirs)
		require.ErrorIs(t, err, safefile.ErrNotPrivate)
		assert.Contains(t, err.Error(), "belongs to another user")
	} else {
		t.Log("not root: the other-owner case is not tried")
	}

	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	assert.Error(t, safefile.PrivateDir(file), "a file is not a folder")
}
