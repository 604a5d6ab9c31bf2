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
// simulated model, the built-in tasks, the real clients and the tests' own
// state folder.
var fixtures = []string{"maker/sim", "maker/hanoi", "maker/spec", "maker/models", "internal/statetest"}

// table is ARCHITECTURE.md's package table: the row of each package
// (bottom up), and the set each may import (the packages its row names,
// and what those may import in turn).
type table struct {
	row     map[string]int
	allowed map[string]map[string]bool
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
			pkgs = append(pkgs, m[1])
			tb.row[m[1]] = len(order)
		}
		require.NotEmpty(t, pkgs, "a row of the table names its packages in backticks: %q", line)
		order = append(order, pkgs)
		imports = append(imports, cols[len(cols)-2])
	}
	require.NotEmpty(t, order, "ARCHITECTURE.md has the package table")
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

func TestTableIsRead(t *testing.T) {
	tb := readTable(t, "../../ARCHITECTURE.md")
	assert.Equal(t, map[string]bool{"internal/catch": true, "internal/mono": true, "internal/fielderr": true}, tb.allowed["vote"], "vote imports nothing of mdap but the panic catcher, the clock and the configuration error")
	assert.True(t, tb.allowed["maker"]["intent"])
	assert.True(t, tb.allowed["maker"]["categories"], "below a package named is below")
	assert.False(t, tb.allowed["maker"]["maker/sim"], "never up")
	assert.False(t, tb.allowed["intent"]["executor"], "never up")
	assert.True(t, tb.allowed["executor"]["internal/schema"], "internal/* names every internal package")
	assert.True(t, tb.allowed["cmd/maker"]["maker/cluster"], "everything")
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
		check(pkg.Imports, rel, nil)
		check(pkg.TestImports, rel+" (its tests)", fixtures)
		check(pkg.XTestImports, rel+" (its external tests)", fixtures)
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, seen, 10, "the walk found the packages")
}
