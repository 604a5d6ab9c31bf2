//go:build unix

package fstools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRootReplacedBySymlink: the root folder is renamed away after New and
// a symbolic link to another folder takes its name. The tools keep serving
// the folder the executor was built on, wherever it now is.
func TestRootReplacedBySymlink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, moved, other := filepath.Join(base, "root"), filepath.Join(base, "moved"), filepath.Join(base, "other")
	require.NoError(t, os.Mkdir(root, 0o755))
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, writeFile(filepath.Join(root, "hello.txt"), "inside"))
	require.NoError(t, writeFile(filepath.Join(other, "hello.txt"), secret))
	e := newExec(t, root, executor.WithPolicy(rwPolicy()))

	require.NoError(t, os.Rename(root, moved))
	require.NoError(t, os.Symlink(other, root))

	obs := run(t, e, "read_file", args{"path": "hello.txt"})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "inside", obs.Content)
	assert.Contains(t, run(t, e, "grep", args{"pattern": "TOP"}).Content, "no line matches")
	assert.NotContains(t, run(t, e, "list_dir", nil).Content, "new.txt")

	obs = run(t, e, "write_file", args{"path": "new.txt", "content": "written"})
	require.True(t, obs.OK(), obs.Content)
	b, err := os.ReadFile(filepath.Join(moved, "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "written", string(b))
	_, err = os.Stat(filepath.Join(other, "new.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing lands in the link's target")
	assert.Equal(t, root, e.Root(), "Root is the path the executor was built on")
}

// TestClose: Close releases the root, is idempotent, and afterwards the
// file tools fail with a readable observation while other tools still run.
func TestClose(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, writeFile(filepath.Join(root, "a.txt"), "a\n"))
	e, err := New(root)
	require.NoError(t, err)
	assert.True(t, run(t, e, "read_file", args{"path": "a.txt"}).OK())
	require.NoError(t, e.Close())
	require.NoError(t, e.Close(), "a second Close is a no-op")

	for _, c := range []struct {
		tool string
		args args
	}{
		{"read_file", args{"path": "a.txt"}},
		{"list_dir", nil},
		{"glob", args{"pattern": "*"}},
		{"grep", args{"pattern": "a"}},
	} {
		obs := run(t, e, c.tool, c.args)
		assert.Equal(t, intent.StatusError, obs.Status, c.tool)
		assert.Equal(t, intent.ReasonToolError, obs.Reason, c.tool)
		assert.Contains(t, obs.Content, "closed", c.tool)
	}
	assert.True(t, run(t, e, "list_tool_categories", nil).OK(), "the index tool needs no root")

	none, err := executor.New()
	require.NoError(t, err)
	assert.NoError(t, none.Close(), "an executor without a root closes too")
}
