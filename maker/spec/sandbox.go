package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/declare"
	"github.com/tmc/langchaingo/llms"
)

// ErrOutsideSandbox: a spec's "root" leads out of the folder the caller
// granted (through a symbolic link: Parse already refuses ".." and
// absolute roots). It wraps ErrSpec.
var ErrOutsideSandbox = fmt.Errorf("%w: \"root\" leads out of the granted folder", ErrSpec)

// ErrNoSandbox: the folder a caller grants is not an existing folder.
var ErrNoSandbox = errors.New("the granted folder is not a folder")

// ResolveRoot gives "root" its one meaning, the same for maker run,
// maker solve, the MCP server's run_task and the library: the folder a
// spec task's file tools work in is the spec's root inside sandbox, the
// folder the caller grants (maker run's --root, by default the spec
// file's folder; a tasks line's or maker solve's --root; the MCP
// server's root). A spec without a root works in sandbox itself.
//
// The result is absolute, with symbolic links resolved, and inside
// sandbox; a root that leads out of it is refused with ErrOutsideSandbox,
// naming the field. Errors: ErrNoSandbox when sandbox is not a folder;
// ErrSpec when the spec's root is missing or not a folder. Cost: a few
// stats.
func ResolveRoot(sandbox string, s *Spec) (string, error) {
	box, err := realFolder(sandbox)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrNoSandbox, sandbox, err)
	}
	if s.Root == "" {
		return box, nil
	}
	if filepath.IsAbs(s.Root) || !filepath.IsLocal(s.Root) {
		return "", fmt.Errorf("%w: %q", ErrOutsideSandbox, s.Root)
	}
	dir, err := realFolder(filepath.Join(box, s.Root))
	if err != nil {
		return "", fmt.Errorf("%w: \"root\" is %q, which is not a folder inside %s: %w", ErrSpec, s.Root, box, err)
	}
	rel, err := filepath.Rel(box, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%w: %q resolves to %s, outside %s; give a folder inside it", ErrOutsideSandbox, s.Root, dir, box)
	}
	return dir, nil
}

func realFolder(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder", abs)
	}
	return abs, nil
}

// CheckTools checks, before any call, that every tool the spec names can
// ever run under ex: a name ex does not have (a misspelling, such as
// "read_files") and a name ex's policy always denies are errors wrapping
// ErrSpec that name the field, the tool, and what ex has or how to allow
// it. Cost: a lookup per name.
func CheckTools(s *Spec, ex *executor.Executor) error {
	loaded := map[string]bool{}
	for _, n := range ex.Loaded() {
		loaded[n] = true
	}
	var unknown, denied []string
	for _, name := range s.Tools {
		switch _, ok := ex.Lookup(name); {
		case !ok:
			unknown = append(unknown, name)
		case !loaded[name]:
			denied = append(denied, name)
		}
	}
	switch {
	case len(unknown) > 0:
		return fmt.Errorf("%w: \"tools\" names %s, which this run does not have; the tools are %s (see maker tools)",
			ErrSpec, quoteList(unknown), strings.Join(ex.Registered(), ", "))
	case len(denied) > 0:
		return fmt.Errorf("%w: \"tools\" names %s, which the tool policy (%s) always denies: allow it (--tools %s,%s) or take it out of \"tools\"",
			ErrSpec, quoteList(denied), ex.Policy(), ex.Policy(), strings.Join(denied, ","))
	}
	return nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// Declare returns the tools a run of the spec declares to its model:
// declare.Tools of the spec's tools over ex, with descriptions from
// skills/NAME.md under skills (nil for none), closed over the tools the
// first prompt names. Errors are declare.Tools'.
func Declare(s *Spec, ex *executor.Executor, skills fs.FS) ([]llms.Tool, error) {
	return declare.Tools(ex, s.Tools, skills, New(s).Prompt(nil))
}
