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

// TestHardLinks: the sandbox is about names. By default a hard link inside
// the root to a file outside reads that file; WithRefuseHardLinks refuses
// every regular file with more than one name. Writes replace the name and
// never change the other names' file either way.
func TestHardLinks(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.Link(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.root, "hard.txt")))

	def := newExec(t, f.root)
	assert.Equal(t, secret, run(t, def, "read_file", args{"path": "hard.txt"}).Content, "documented: a hard link is the same file")
	assert.Contains(t, run(t, def, "grep", args{"pattern": "TOP SECRET"}).Content, "hard.txt:1:")

	strict := newExec(t, f.root, WithRefuseHardLinks(), executor.WithPolicy(rwPolicy()))
	obs := run(t, strict, "read_file", args{"path": "hard.txt"})
	assert.Equal(t, intent.StatusDenied, obs.Status, obs.Content)
	assert.Equal(t, intent.ReasonOutsideRoot, obs.Reason)
	assert.Contains(t, obs.Content, "hard link")
	assert.NotContains(t, obs.Content, "TOP SECRET")
	obs = run(t, strict, "grep", args{"pattern": "TOP SECRET", "paths": []any{"hard.txt"}})
	assert.Equal(t, intent.ReasonOutsideRoot, obs.Reason, "a named hard link is refused")
	obs = run(t, strict, "grep", args{"pattern": "TOP SECRET"})
	assert.Contains(t, obs.Content, "no line matches", "a hard link met on a walk is skipped")
	assert.Equal(t, "hello\nworld\n", run(t, strict, "read_file", args{"path": "hello.txt"}).Content, "files with one name are read")
	assert.Contains(t, run(t, strict, "list_dir", nil).Content, "hard.txt", "listing names reads no content")

	obs = run(t, strict, "write_file", args{"path": "hard.txt", "content": "replaced"})
	require.True(t, obs.OK(), obs.Content)
	b, err := os.ReadFile(filepath.Join(f.outside, "secret.txt"))
	require.NoError(t, err)
	assert.Equal(t, secret, string(b), "the write replaced the name, not the shared file")
	assert.Equal(t, "replaced", run(t, strict, "read_file", args{"path": "hard.txt"}).Content, "now a file of its own")
}
