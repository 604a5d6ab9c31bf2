package spec

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readme reads the repository's README.txt through ex: the status of the
// observation (a closed executor's sandbox refuses it).
func readme(t *testing.T, ex *executor.Executor) intent.Status {
	t.Helper()
	obs, err := ex.Execute(context.Background(), intent.ToolIntent{Tool: "read_file", Args: map[string]any{"path": "README.txt"}})
	require.NoError(t, err)
	return obs.Status
}

// TestOpenFile: a spec file opened the one way has its task, its root
// (the spec's "root" inside the spec file's folder), its executor there
// and its declared tools; Close closes the executor it made. A tool the
// policy always denies is refused, naming the file. Broken on purpose
// (Open keeping a new executor without marking it its own), the read
// after Close succeeds and this fails.
func TestOpenFile(t *testing.T) {
	path := "../../testdata/spec/find-version.json"
	o, err := OpenFile(path, "", "")
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks("../../testdata/spec/repo")
	require.NoError(t, err)
	want, _ = filepath.Abs(want)
	assert.Equal(t, want, o.Root)
	require.NotNil(t, o.Task)
	assert.Equal(t, "find-version", o.Spec.Name)
	var names []string
	for _, tl := range o.Tools {
		names = append(names, tl.Function.Name)
	}
	assert.ElementsMatch(t, []string{"read_file", "grep"}, names)
	assert.Equal(t, intent.StatusOK, readme(t, o.Executor))
	require.NoError(t, o.Close())
	assert.NotEqual(t, intent.StatusOK, readme(t, o.Executor), "Close closed the executor Open made")
	require.NoError(t, o.Close(), "a second Close is harmless")

	_, err = OpenFile("../../testdata/spec/write-note.json", "", "")
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), "write-note.json")
	assert.Contains(t, err.Error(), "always denies")

	_, err = OpenFile(path, filepath.Join(t.TempDir(), "nope"), "")
	require.ErrorIs(t, err, ErrNoSandbox)
}

// TestOpenSharesAnExecutor: a Grant's Shared executor is used when its
// root is the spec's root, and Close leaves it open; at another root Open
// makes its own with the Grant's policy. Broken on purpose (Close
// closing whatever executor it holds), the shared read fails after Close.
func TestOpenSharesAnExecutor(t *testing.T) {
	s, err := Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	shared, err := fstools.New("../../testdata/spec/repo")
	require.NoError(t, err)
	defer shared.Close()
	o, err := Open(s, Grant{Sandbox: "../../testdata/spec", Policy: categories.DefaultPolicy(), Shared: shared})
	require.NoError(t, err)
	assert.Same(t, shared, o.Executor)
	require.NoError(t, o.Close())
	assert.Equal(t, intent.StatusOK, readme(t, shared), "the shared executor stays open")

	other, err := fstools.New(t.TempDir())
	require.NoError(t, err)
	defer other.Close()
	o, err = Open(s, Grant{Sandbox: "../../testdata/spec", Policy: categories.DefaultPolicy(), Shared: other})
	require.NoError(t, err)
	assert.NotSame(t, other, o.Executor)
	assert.Equal(t, intent.StatusOK, readme(t, o.Executor))
	require.NoError(t, o.Close())
}
