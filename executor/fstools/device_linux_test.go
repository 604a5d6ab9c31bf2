//go:build linux

package fstools

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeviceRefused reads a character device made inside the root, when
// the test may create one (as root), and through a link otherwise.
func TestDeviceRefused(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)
	obs := run(t, e, "read_file", map[string]any{"path": "devlink"})
	assert.Equal(t, intent.ReasonNotFound, obs.Reason)
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(f.root, "devlink")))
	obs = run(t, e, "read_file", map[string]any{"path": "devlink"})
	assert.Equal(t, intent.ReasonOutsideRoot, obs.Reason, obs.Content)

	if err := mknodZero(filepath.Join(f.root, "zero")); err != nil {
		t.Skipf("cannot create a device here: %v", err)
	}
	obs = run(t, e, "read_file", map[string]any{"path": "zero"})
	assert.Equal(t, intent.ReasonNotRegular, obs.Reason, obs.Content)
	assert.Contains(t, obs.Content, "device")
}

// mknodZero makes a character device like /dev/zero (major 1, minor 5).
func mknodZero(p string) error {
	return syscall.Mknod(p, syscall.S_IFCHR|0o644, 1<<8|5)
}
