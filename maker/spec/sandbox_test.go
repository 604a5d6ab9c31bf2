package spec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveRootIsInsideTheSandbox(t *testing.T) {
	s, err := Load("../../testdata/spec/find-version.json")
	require.NoError(t, err)
	got, err := ResolveRoot("../../testdata/spec", s)
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(repo)
	require.NoError(t, err)
	want, _ = filepath.Abs(want)
	assert.Equal(t, want, got)

	// The sandbox itself when the spec has no root.
	box := t.TempDir()
	noRoot := *s
	noRoot.Root = ""
	got, err = ResolveRoot(box, &noRoot)
	require.NoError(t, err)
	realBox, _ := filepath.EvalSymlinks(box)
	assert.Equal(t, realBox, got)

	// A root that leads out through a link is refused, naming the field.
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(box, "repo")))
	_, err = ResolveRoot(box, s)
	require.ErrorIs(t, err, ErrOutsideSandbox)
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), `"root"`)

	// A missing root, a missing sandbox.
	_, err = ResolveRoot(t.TempDir(), s)
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), `"repo"`)
	_, err = ResolveRoot(filepath.Join(box, "nope"), s)
	require.ErrorIs(t, err, ErrNoSandbox)
	// Parse refuses ".." and absolute roots; a hand-made Spec is checked too.
	bad := *s
	bad.Root = "../x"
	_, err = ResolveRoot(box, &bad)
	require.ErrorIs(t, err, ErrOutsideSandbox)
}

func TestCheckToolsRefusesUnknownAndAlwaysDenied(t *testing.T) {
	ex, err := executor.New(t.TempDir())
	require.NoError(t, err)
	defer ex.Close()
	s, err := Parse([]byte(`{"system":"x","answer":{},"tools":["grep","read_files"]}`))
	require.NoError(t, err)
	err = CheckTools(s, ex)
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), `"read_files"`)
	assert.Contains(t, err.Error(), "read_file, ", "it lists what the run has")

	s, err = Load("../../testdata/spec/write-note.json")
	require.NoError(t, err)
	err = CheckTools(s, ex)
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), "always denies")

	tax := categories.Builtin()
	pol, err := tax.ParseSelection("read_only,write_file")
	require.NoError(t, err)
	rw, err := executor.New(t.TempDir(), executor.WithPolicy(pol), executor.WithTaxonomy(tax))
	require.NoError(t, err)
	defer rw.Close()
	assert.NoError(t, CheckTools(s, rw))

	tools, err := Declare(s, rw, nil)
	require.NoError(t, err)
	require.Len(t, tools, 1)
	assert.Equal(t, "write_file", tools[0].Function.Name)
	assert.Contains(t, tools[0].Function.Parameters.(map[string]any)["properties"], "content")
}
