package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ARCHITECTURE.md names internal/buildinfo "the one reader of the
// build's versions"; no other non-test file reads the build information
// itself (maker/mcpserver once did, and so reported the
// embedding program's version rather than mdap's).
func TestBuildinfoIsTheOneVersionReader(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	var readers []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, path)
		if strings.Contains(string(b), "debug.ReadBuildInfo") && filepath.Dir(rel) != filepath.Join("internal", "buildinfo") {
			readers = append(readers, rel)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, readers, "read the build's versions through internal/buildinfo")
}
