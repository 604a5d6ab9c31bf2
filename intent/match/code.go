package match

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"
)

// Normalizer rewrites source code of one language to a normal form: two
// programs that mean the same for the task should come out equal. It must
// be deterministic (a run's classes are only as reproducible as its
// normalizer) and safe for concurrent use. An error makes the sample's
// answer unkeyable: a red flag in a run, never a vote.
type Normalizer func(src string) (string, error)

// ErrNormalizer: a code Normalizer failed on an answer.
var ErrNormalizer = errors.New("code normalizer failed")

// NormalGo is the "code" matcher's normal form of Go source: src parsed
// as a file, else as declarations, else as statements, else as an
// expression (the first that parses), printed by go/format without
// comments, with every name declared inside a function (parameters,
// results, receivers, locals, labels) renamed in order of first
// appearance (alpha-renaming), so that layout, comments and local names
// do not count while package-level names, fields, methods and imports do.
// Source that parses as none of these is returned trimmed of white space
// (compared as text). Cost: a parse and a type check of src, no imports
// read.
func NormalGo(src string) string {
	src = strings.TrimSpace(src)
	for _, wrap := range goWraps {
		if out, ok := normalGoAs(wrap, src); ok {
			return out
		}
	}
	return src
}

// goWraps are the ways a snippet may be Go: a file, declarations,
// statements, an expression (%s is the snippet).
var goWraps = []string{"%s", "package p\n%s", "package p\nfunc _() {\n%s\n}", "package p\nvar _ = %s"}

func normalGoAs(wrap, src string) (string, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", fmt.Sprintf(wrap, src), parser.SkipObjectResolution)
	if err != nil {
		return "", false
	}
	renameLocals(fset, f)
	ungroupParams(f)
	// Printed against an empty file set, the source's line breaks are
	// forgotten: the layout is the printer's alone.
	var b bytes.Buffer
	if err := format.Node(&b, token.NewFileSet(), f); err != nil {
		return "", false
	}
	return b.String(), true
}

// renameLocals renames every object declared in a function's scope to
// l0, l1, ... in order of first appearance. The names come from a type
// check that imports empty packages and ignores its errors: only which
// identifier denotes which declaration matters here.
func renameLocals(fset *token.FileSet, f *ast.File) {
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: emptyImporter{}, Error: func(error) {}}
	pkg, _ := conf.Check("p", fset, []*ast.File{f}, info)
	if pkg == nil {
		return
	}
	local := func(o types.Object) bool {
		if o == nil || o.Pkg() != pkg || o.Name() == "_" {
			return false
		}
		if v, ok := o.(*types.Var); ok && v.IsField() {
			return false
		}
		if _, ok := o.(*types.Func); ok {
			return false // methods and functions keep their names
		}
		if _, ok := o.(*types.Label); ok {
			return true // labels have no parent scope
		}
		// Not the universe, the package, or a file's scope (imports).
		p := o.Parent()
		return p != nil && p != types.Universe && p != pkg.Scope() && p.Parent() != pkg.Scope()
	}
	names := map[types.Object]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		o := info.Defs[id]
		if o == nil {
			o = info.Uses[id]
		}
		if !local(o) {
			return true
		}
		name, ok := names[o]
		if !ok {
			name = "l" + strconv.Itoa(len(names))
			names[o] = name
		}
		id.Name = name
		return true
	})
}

// ungroupParams writes every parameter and result with its own type:
// (a, b int) and (a int, b int) are one signature.
func ungroupParams(f *ast.File) {
	split := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		var list []*ast.Field
		for _, field := range fl.List {
			if len(field.Names) <= 1 {
				list = append(list, field)
				continue
			}
			for _, n := range field.Names {
				list = append(list, &ast.Field{Names: []*ast.Ident{n}, Type: field.Type})
			}
		}
		fl.List = list
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok {
			split(ft.Params)
			split(ft.Results)
		}
		return true
	})
}

// emptyImporter imports every path as an empty package named by its last
// element: enough for the type check to tell locals from the rest.
type emptyImporter struct{}

func (emptyImporter) Import(p string) (*types.Package, error) {
	pkg := types.NewPackage(p, path.Base(p))
	pkg.MarkComplete()
	return pkg, nil
}

// CommandNormalizer is a Normalizer that runs argv (no shell) with the
// source on standard input and takes its standard output, trimmed, as the
// normal form: a formatter such as `gofmt`, `ruff format -` or `prettier
// --stdin-filepath x.ts`. A run that exits non-zero, prints more than 1
// MiB or takes longer than timeout (default 10s) is an error wrapping
// ErrNormalizer with its standard error's first line. Only a library
// caller or the operator names a command: an answer schema never does.
// Cost: a process per distinct answer.
func CommandNormalizer(timeout time.Duration, argv ...string) Normalizer {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return func(src string) (string, error) {
		if len(argv) == 0 {
			return "", fmt.Errorf("%w: no command", ErrNormalizer)
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader(src)
		var out, errOut capped
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			first, _, _ := strings.Cut(strings.TrimSpace(errOut.b.String()), "\n")
			return "", fmt.Errorf("%w: %s: %w: %s", ErrNormalizer, argv[0], err, first)
		}
		if out.over {
			return "", fmt.Errorf("%w: %s printed over 1 MiB", ErrNormalizer, argv[0])
		}
		return strings.TrimSpace(out.b.String()), nil
	}
}

// capped is a writer that keeps the first MiB.
type capped struct {
	b    bytes.Buffer
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := 1<<20 - c.b.Len(); len(p) > room {
		c.b.Write(p[:max(room, 0)])
		c.over = true
		return len(p), nil
	}
	return c.b.Write(p)
}
