package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentinelNaming checks ARCHITECTURE.md's naming rule for the
// exported sentinel errors (var ErrX = errors.New("...")): an error about
// a configuration value is ErrConfig, reading "invalid configuration",
// and only internal/fielderr makes one (every package's ErrConfig is it);
// no ErrBad* (say what is wrong: ErrInvalidX, ErrUndecodable, ...); and
// a sentinel's text carries no package prefix ("pkg: ..."): the message
// that wraps it says where.
func TestSentinelNaming(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	checked := 0
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
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, path)
		pkg := f.Name.Name
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !name.IsExported() || !strings.HasPrefix(name.Name, "Err") || i >= len(vs.Values) {
						continue
					}
					text, ok := errorsNew(vs.Values[i])
					if !ok {
						continue
					}
					checked++
					if name.Name == "ErrConfig" && rel != filepath.Join("internal", "fielderr", "fielderr.go") {
						t.Errorf("%s: a package's ErrConfig is fielderr.ErrConfig, the one configuration sentinel, not a sentinel of its own", rel+": "+name.Name)
					}
					where := rel + ": " + name.Name
					assert.False(t, strings.HasPrefix(name.Name, "ErrBad"), "%s: name the fault (ErrInvalidX, ErrConfig, ...), not ErrBad*", where)
					assert.False(t, strings.HasPrefix(text, pkg+": "), "%s: %q: a sentinel's text has no package prefix", where, text)
					if name.Name == "ErrConfig" {
						assert.Equal(t, "invalid configuration", text, where)
					}
					for _, old := range []string{"ErrAdaptiveK", "ErrEnsemble", "ErrLimits", "ErrRunner", "ErrDisks"} {
						assert.NotEqual(t, old, name.Name, "%s: a configuration error is ErrConfig", where)
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, checked, 50, "the walk found the sentinels")
}

// errorsNew returns the text of errors.New("text").
func errorsNew(e ast.Expr) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "New" {
		return "", false
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "errors" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
