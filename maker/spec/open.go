package spec

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/tmc/langchaingo/llms"
)

// Opened is a spec task made ready to run: the spec, the task at its
// start, the executor of its tools over its root, and the tools it
// declares to the model. Close it when done.
type Opened struct {
	Spec     *Spec
	Task     *Task
	Executor *executor.Executor
	// Root is the folder the file tools work in.
	Root string
	// Tools are the tools declared to the model (Declare): the spec's
	// tools that the policy allows, with their schemas; set them as
	// maker.Solver.Tools.
	Tools []llms.Tool
	// own: the executor was made by Open, and Close closes it.
	own bool
}

// Close releases the executor if Open made it (not a Grant's Shared
// one). It is safe to call more than once.
func (o *Opened) Close() error {
	if !o.own {
		return nil
	}
	o.own = false
	return o.Executor.Close()
}

// Grant is what a spec task's tools are given: the folder, the policy,
// where their skill files are.
type Grant struct {
	// Sandbox is the folder granted to the file tools: they work in the
	// spec's "root" inside it (ResolveRoot, the one meaning of "root").
	Sandbox string
	// Policy is the categories the executor allows (categories.Builtin's
	// taxonomy).
	Policy categories.Policy
	// Skills holds skills/NAME.md, the declared tools' descriptions
	// (Declare); nil means none.
	Skills fs.FS
	// Logger is the executor's; nil means its default.
	Logger *slog.Logger
	// Shared, if set, is used instead of a new executor when its root is
	// the spec's root (the MCP server's own); Close leaves it open.
	Shared *executor.Executor
}

// Open makes the parsed spec s ready to run under g: the one way every
// caller (maker run, maker solve's spec jobs, the MCP server's run_task,
// a library) opens a spec task. It resolves the spec's root inside
// g.Sandbox (ResolveRoot), makes the executor there with g.Policy (or
// takes g.Shared), checks the spec's tools against it (CheckTools) and
// declares them (Declare). Declaring is not permitting: the executor
// checks every call again.
//
// Before anything runs it refuses: a root outside the sandbox
// (ErrOutsideSandbox) or a sandbox that is not a folder (ErrNoSandbox);
// a tool the run does not have or that the policy always denies
// (CheckTools); a broken skill or schema file (wrapping ErrSpec); the
// executor's errors for the root. On an error nothing is left open.
// Cost: a few stats, and reading the declared tools' skill files.
func Open(s *Spec, g Grant) (*Opened, error) {
	root, err := ResolveRoot(g.Sandbox, s)
	if err != nil {
		return nil, err
	}
	o := &Opened{Spec: s, Task: New(s), Executor: g.Shared}
	if g.Shared == nil || g.Shared.Root() != root {
		opts := []executor.Option{executor.WithTaxonomy(categories.Builtin()), executor.WithPolicy(g.Policy)}
		if g.Logger != nil {
			opts = append(opts, executor.WithLogger(g.Logger))
		}
		if o.Executor, err = fstools.New(root, opts...); err != nil {
			return nil, fmt.Errorf("\"root\" %s: %w", root, err)
		}
		o.own = true
	}
	o.Root = o.Executor.Root()
	if err := CheckTools(s, o.Executor); err != nil {
		o.Close()
		return nil, err
	}
	if o.Tools, err = Declare(s, o.Executor, g.Skills); err != nil {
		o.Close()
		return nil, fmt.Errorf("%w: %w", ErrSpec, err)
	}
	return o, nil
}

// OpenFile loads the spec file at path (Load) and opens it (Open) with
// the file tools in sandbox ("" means the spec file's folder), the
// policy of a --tools list ("" means the read-only categories), and the
// skills/NAME.md files beside the spec file. Errors are Load's and
// Open's, naming the file; the categories package's for tools.
func OpenFile(path, sandbox, tools string) (*Opened, error) {
	return OpenFileInput(path, sandbox, tools, nil)
}

// OpenFileInput is OpenFile for the spec with input merged into its
// initial state (Spec.WithInput); a nil input is OpenFile. Errors: those
// of OpenFile and WithInput.
func OpenFileInput(path, sandbox, tools string, input json.RawMessage) (*Opened, error) {
	s, err := Load(path)
	if err != nil {
		return nil, err
	}
	if input != nil {
		if s, err = s.WithInput(input); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	g, err := grantIn(filepath.Dir(path), sandbox, tools)
	if err != nil {
		return nil, err
	}
	o, err := Open(s, g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

// OpenReader reads a spec from r (at most MaxSpecBytes, as Load reads a
// file) and opens it as OpenFile opens a file in the folder dir: the
// sandbox ("" means dir), the policy of tools and the skills/NAME.md files
// in dir. name names the spec in errors ("standard input"). Errors: Parse's
// and Open's, naming it; the categories package's for tools.
func OpenReader(r io.Reader, name, dir, sandbox, tools string) (*Opened, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	g, err := grantIn(dir, sandbox, tools)
	if err != nil {
		return nil, err
	}
	o, err := Open(s, g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return o, nil
}

// grantIn is the Grant of a spec whose folder is dir: the file tools in
// sandbox ("" means dir), the policy of a --tools list, dir's skills.
func grantIn(dir, sandbox, tools string) (Grant, error) {
	if sandbox == "" {
		sandbox = dir
	}
	policy, err := selection.Parse(categories.Builtin(), tools)
	if err != nil {
		return Grant{}, fmt.Errorf("tools %q: %w", tools, err)
	}
	return Grant{Sandbox: sandbox, Policy: policy, Skills: os.DirFS(dir)}, nil
}
