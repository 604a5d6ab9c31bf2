package fstools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mdap-go/mdap/executor"
)

// DefaultReadCap is the most bytes the tools read from (or write_file
// writes to) one file, unless [WithReadCap] says otherwise.
const DefaultReadCap = 1 << 20

// Option configures [Open].
type Option func(*config)

type config struct {
	readCap         int64
	refuseHardLinks bool
}

// WithReadCap sets the most bytes the built-in tools read from one file,
// and the largest content write_file accepts (default [DefaultReadCap]).
// A non-positive n keeps the default.
func WithReadCap(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.readCap = n
		}
	}
}

// WithRefuseHardLinks makes read_file and grep refuse a regular file with
// more than one name (a link count above one): named, it is a denial
// (intent.ReasonOutsideRoot); met while grep walks a folder, it is skipped.
//
// Why: the sandbox is about names, not files. Every name a tool resolves
// stays inside the root, but a hard link inside the root is the same file
// as its other names, wherever they are, so by default reading it reads a
// file that may also live outside the root. Writes need no such option:
// write_file replaces a name with a new file and never changes the file
// its other names share. On platforms that report no link count (not
// Unix) the option refuses nothing.
func WithRefuseHardLinks() Option { return func(c *config) { c.refuseHardLinks = true } }

// Dir is the file tools over one root folder, held open until Close. It
// is an [executor.Workspace]. Safe for concurrent use.
type Dir struct {
	sb *sandbox
}

var _ executor.Workspace = (*Dir)(nil)

// Open opens root for the file tools. Errors: [executor.ErrInvalidRoot]
// when root is not an existing folder.
func Open(root string, opts ...Option) (*Dir, error) {
	c := config{readCap: DefaultReadCap}
	for _, o := range opts {
		o(&c)
	}
	dir, err := realDir(root)
	if err != nil {
		return nil, err
	}
	sb, err := newSandbox(dir, c.readCap, c.refuseHardLinks)
	if err != nil {
		return nil, err
	}
	return &Dir{sb: sb}, nil
}

// New returns an executor with the file tools over root (Open with its
// defaults, then executor.New with [executor.WithWorkspace] and opts), or,
// for root "", an executor without file tools (executor.New(opts...)).
//
// Errors: [executor.ErrInvalidRoot] when root is not an existing folder;
// executor.New's otherwise (the folder is closed then).
func New(root string, opts ...executor.Option) (*executor.Executor, error) {
	if root == "" {
		return executor.New(opts...)
	}
	d, err := Open(root)
	if err != nil {
		return nil, err
	}
	return executor.New(append([]executor.Option{executor.WithWorkspace(d)}, opts...)...)
}

// Root returns the absolute root folder as [Open] found it, with symbolic
// links resolved. The tools work in the folder that was there when Open
// opened it, even if it has been renamed since or another folder or link
// has taken this path.
func (d *Dir) Root() string { return d.sb.dir }

// Tools returns the file tools over the folder, in the categories
// categories.Builtin gives them. They are [executor.ContextBound]: the
// executor runs them on the caller's goroutine.
func (d *Dir) Tools() []executor.Tool { return builtinTools(d.sb) }

// Close releases the folder. Afterwards the tools fail (intent.ReasonToolError,
// saying the executor was closed). Calls running during Close finish or
// fail cleanly. Close is idempotent and safe for concurrent use; only its
// first call can fail, with the error of closing the folder.
func (d *Dir) Close() error { return d.sb.close() }

// boundTool is a file tool: it honours its context in every loop, so the
// executor runs it inline (executor.ContextBound).
type boundTool struct{ executor.Tool }

func (boundTool) RunsInline() bool { return true }

func realDir(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", executor.ErrInvalidRoot, root, unwrapPath(err))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", executor.ErrInvalidRoot, root, unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %q is not a folder", executor.ErrInvalidRoot, root)
	}
	return abs, nil
}

// reasonError is a message for the model that wraps a sentinel without
// repeating the sentinel's own text (as the executor's own denials do).
type reasonError struct {
	sentinel error
	msg      string
}

func (e *reasonError) Error() string { return e.msg }
func (e *reasonError) Unwrap() error { return e.sentinel }

// refusef returns an error whose message is the formatted text and which
// wraps sentinel for errors.Is and the executor's classification.
func refusef(sentinel error, format string, a ...any) error {
	return &reasonError{sentinel: sentinel, msg: fmt.Sprintf(format, a...)}
}

// appendNote adds a bracketed note on its own line.
func appendNote(s, note string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s + note
}

// cutText cuts s to at most n bytes on a UTF-8 boundary and marks the cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
