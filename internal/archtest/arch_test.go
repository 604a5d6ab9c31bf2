// Package archtest checks that the packages import only what the
// architecture allows: imports point down the table in ARCHITECTURE.md,
// never up, never in a cycle.
package archtest

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/mdap-go/mdap/"

// layers lists the packages from the bottom up: a package may import only
// packages of earlier layers (and, within a layer, those named in within).
var layers = [][]string{
	{"categories", "vote", "internal/schema", "internal/frontmatter", "internal/safefile", "internal/httpbound", "internal/httpbound/httpboundtest"},
	{"intent"},
	{"executor"},
	{"maker"},
	{"maker/sim", "maker/fault", "maker/models"},
	{"maker/hanoi", "maker/spec"},
	{"maker/batch"},
	{"maker/simserver", "maker/mcpserver", "maker/cluster", "maker/calibrate"},
	{"benchmarks"},
	{"cmd/maker"},
}

// within are the imports allowed inside one layer, by importer.
var within = map[string][]string{}

func TestImportsPointDown(t *testing.T) {
	level := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			level[p] = i
		}
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	seen := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "docs") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel == "internal/archtest" {
			return nil
		}
		seen++
		mine, known := level[rel]
		if !assert.True(t, known, "package %s is not in the architecture table: add it to ARCHITECTURE.md and to layers", rel) {
			return nil
		}
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			theirs, known := level[dep]
			if !known {
				continue // reported on its own
			}
			ok = theirs < mine || (theirs == mine && slices.Contains(within[rel], dep))
			assert.True(t, ok, "%s imports %s, which is not below it in ARCHITECTURE.md", rel, dep)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, seen, 10, "the walk found the packages")
}
