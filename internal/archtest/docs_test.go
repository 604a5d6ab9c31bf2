package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsNameRealTests checks that every test, fuzz target and benchmark
// the documents name as the proof of a promise exists: a renamed or
// deleted test must take its promise with it.
func TestDocsNameRealTests(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	defined := map[string]bool{}
	def := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)\w*)\(`)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			for _, m := range def.FindAllSubmatch(b, -1) {
				defined[string(m[1])] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	named := regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Z]\\w*)`")
	docs, err := filepath.Glob(filepath.Join(root, "*.md"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	checked := 0
	for _, doc := range append(docs, more...) {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range named.FindAllSubmatch(b, -1) {
			checked++
			assert.True(t, defined[string(m[1])], "%s names %s, which no test file defines", filepath.Base(doc), m[1])
		}
	}
	assert.Greater(t, checked, 30, "the documents name their proofs")
}
