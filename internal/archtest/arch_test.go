// Package archtest checks that the packages import only what the
// architecture allows: imports point down the table in ARCHITECTURE.md,
// never up, never in a cycle. The table itself is the rule: this test
// reads it, so the document and the check cannot drift apart.
package archtest

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/mdap-go/mdap/"

// fixtures are the packages any package's tests may import besides what
// the package itself may (ARCHITECTURE.md, "Checking the arrows"): the
// simulated model, the built-in tasks, the real clients (maker/models and
// its providers), the real file
// tools, the file journal, the scaling laws as an oracle, and the tests' own helpers: their state folder, the standard of proof, the server that
// echoes a key and the flood helper.
var fixtures = []string{"maker/sim", "maker/hanoi", "maker/spec", "maker/models", "maker/models/openai", "maker/models/ollama", "maker/models/anthropic", "maker/models/all", "executor/fstools", "maker/journalfile", "vote/laws",
	"maker/inspect", "internal/statetest", "internal/evidence", "internal/keyecho", "internal/httpbound/httpboundtest"}

// table is ARCHITECTURE.md's package table: the row of each package
// (bottom up), and the set each may import (the packages its row names,
// and what those may import in turn).
type table struct {
	row     map[string]int
	allowed map[string]map[string]bool
	rows    [][]string // the packages of each row, in order
	named   [][]string // the packages each row's imports column names itself
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readTable parses the table of ARCHITECTURE.md: "| `pkg`, `pkg2` | job |
// imports |", where the imports column names packages in backticks, "—"
// for none, `internal/*` for every internal package, and "everything" for
// every package of an earlier row.
func readTable(t *testing.T, path string) table {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	tb := table{row: map[string]int{}, allowed: map[string]map[string]bool{}}
	var order [][]string
	var imports []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| package | job | imports") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "| ---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cols := strings.Split(line, "|")
		require.GreaterOrEqual(t, len(cols), 5, "a row of the table has three columns: %q", line)
		var pkgs []string
		for _, m := range backticked.FindAllStringSubmatch(cols[1], -1) {
			for _, p := range packagesOf(t, filepath.Dir(path), m[1]) {
				pkgs = append(pkgs, p)
				tb.row[p] = len(order)
			}
		}
		require.NotEmpty(t, pkgs, "a row of the table names its packages in backticks: %q", line)
		order = append(order, pkgs)
		imports = append(imports, cols[len(cols)-2])
	}
	require.NotEmpty(t, order, "ARCHITECTURE.md has the package table")
	tb.rows, tb.named = order, make([][]string, len(order))
	for i, pkgs := range order {
		set := map[string]bool{}
		col := imports[i]
		if strings.TrimSpace(col) == "everything" {
			for j := range i {
				for _, p := range order[j] {
					set[p] = true
				}
			}
		}
		for _, m := range backticked.FindAllStringSubmatch(col, -1) {
			named := []string{m[1]}
			if prefix, ok := strings.CutSuffix(m[1], "*"); ok {
				named = nil
				for p := range tb.row {
					if strings.HasPrefix(p, prefix) {
						named = append(named, p)
					}
				}
			}
			if !strings.HasSuffix(m[1], "*") {
				tb.named[i] = append(tb.named[i], m[1])
			}
			for _, n := range named {
				r, known := tb.row[n]
				require.True(t, known, "row %v names %s, which is not in the table", pkgs, n)
				require.Less(t, r, i, "row %v names %s, which is not on an earlier row: imports must point down the table", pkgs, n)
				set[n] = true
				for d := range tb.allowed[n] {
					set[d] = true
				}
			}
		}
		for _, p := range pkgs {
			tb.allowed[p] = set
		}
	}
	return tb
}

// packagesOf is the packages a name of the table's package column
// stands for: itself, or, for a name ending in "/*" (`maker/families/*`),
// every package in a folder under that one, so that a new package there
// needs no row of its own. A "/*" that matches no package fails the test.
func packagesOf(t *testing.T, root, name string) []string {
	prefix, ok := strings.CutSuffix(name, "/*")
	if !ok {
		return []string{name}
	}
	var out []string
	dirs, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(prefix), "*"))
	for _, d := range dirs {
		if _, err := build.ImportDir(d, 0); err == nil {
			rel, _ := filepath.Rel(root, d)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	require.NotEmpty(t, out, "the table's %s names no package", name)
	return out
}

func TestTableIsRead(t *testing.T) {
	tb := readTable(t, "../../ARCHITECTURE.md")
	assert.Equal(t, map[string]bool{"internal/catch": true, "internal/mono": true, "internal/fielderr": true}, tb.allowed["vote"], "vote imports nothing of mdap but the panic catcher, the clock and the configuration error")
	assert.True(t, tb.allowed["maker"]["intent"])
	assert.True(t, tb.allowed["maker"]["categories"], "below a package named is below")
	assert.False(t, tb.allowed["maker"]["maker/sim"], "never up")
	assert.False(t, tb.allowed["intent"]["executor"], "never up")
	assert.True(t, tb.allowed["executor"]["internal/schema"], "internal/* names every internal package")
	assert.True(t, tb.allowed["cmd/maker"]["maker/cluster"], "everything")
	assert.True(t, tb.allowed["maker/families/sortlist"]["maker/decompose"], "maker/families/* names every family's package")
	assert.True(t, tb.allowed["maker/problems"]["maker/families/multiply"], "and so does an imports column")
}

func TestImportsPointDown(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	tb := readTable(t, filepath.Join(root, "ARCHITECTURE.md"))
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
		allowed, known := tb.allowed[rel]
		if !assert.True(t, known, "package %s is not in the architecture table: add it to ARCHITECTURE.md", rel) {
			return nil
		}
		check := func(imports []string, who string, extra []string) {
			for _, imp := range imports {
				dep, ok := strings.CutPrefix(imp, module)
				if !ok || dep == rel {
					continue
				}
				_, known := tb.row[dep]
				assert.True(t, known, "%s imports %s, which is not in the architecture table", who, dep)
				ok = allowed[dep] || (slices.Contains(extra, dep) && tb.row[dep] != tb.row[rel])
				assert.True(t, ok, "%s imports %s, which is not below it in ARCHITECTURE.md", who, dep)
			}
		}
		testExtra := fixtures
		if !slices.Contains(core, rel) {
			// A satellite builds on the core: its tests may drive any of it.
			testExtra = append(slices.Clone(fixtures), core...)
		}
		check(pkg.Imports, rel, nil)
		check(pkg.TestImports, rel+" (its tests)", testExtra)
		check(pkg.XTestImports, rel+" (its external tests)", testExtra)
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, seen, 10, "the walk found the packages")
}

// TestTableNamesOnlyRealArrows checks the table the other way round: every
// package it lists exists, and every import a row names is an import of
// at least one of the row's packages (their own code, not their tests), so
// the table shows no package or arrow the code no longer has.
func TestTableNamesOnlyRealArrows(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	tb := readTable(t, filepath.Join(root, "ARCHITECTURE.md"))
	for i, pkgs := range tb.rows {
		imported := map[string]bool{}
		for _, p := range pkgs {
			pkg, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(p)), 0)
			if !assert.NoError(t, err, "ARCHITECTURE.md lists %s, which is not a package of this module: remove its row", p) {
				continue
			}
			for _, imp := range pkg.Imports {
				if dep, ok := strings.CutPrefix(imp, module); ok {
					imported[dep] = true
				}
			}
		}
		for _, n := range tb.named[i] {
			assert.True(t, imported[n], "ARCHITECTURE.md's row %v names %s, which none of them imports: remove it from the row", pkgs, n)
		}
	}
}

// core is the packages a library user reads to know what a run does
// (ARCHITECTURE.md, "The core and its satellites"): the output and its key,
// the vote, the executor, the taxonomy, the step loop with its journal, and
// the model clients.
var core = []string{"categories", "intent", "vote", "executor", "maker/journal", "maker", "maker/models"}

// TestCoreImportsNoSatellite: the core's own code imports only the core and
// internal packages, never a satellite (a sub-package such as vote/rivals
// included), so a satellite can be read, replaced or left out without the
// core noticing. Tests may use the fixtures, as everywhere.
func TestCoreImportsNoSatellite(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	for _, p := range core {
		pkg, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(p)), 0)
		require.NoError(t, err, "core package %s", p)
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok || strings.HasPrefix(dep, "internal/") {
				continue
			}
			assert.True(t, slices.Contains(core, dep), "core package %s imports %s, a satellite: the core may import only the core (%v) and internal/", p, dep, core)
		}
	}
}
