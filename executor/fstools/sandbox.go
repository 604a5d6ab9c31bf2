package fstools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/internal/words"
)

// maxSymlinks is how many symbolic links one path may go through; it is
// os.Root's own limit, so the explicit check and os.Root agree.
const maxSymlinks = 8

// maxResolveSteps is how many components resolve examines for one path,
// links' targets included.
const maxResolveSteps = 4 * executor.MaxPathDepth

// sandbox resolves paths inside one root folder, held open as an os.Root
// for the executor's life: every open, stat, walk, rename and mkdir of the
// file tools goes through it, so os.Root enforces, race-free, what the
// explicit checks here word for the model, and a root renamed away or
// replaced by a symbolic link after Open goes on being the same folder.
type sandbox struct {
	dir     string // the root's absolute path at Open, symbolic links resolved
	root    *os.Root
	readCap int64
	// refuseHardLinks refuses to read regular files with more than one
	// name.
	refuseHardLinks bool
	closed          atomic.Bool
}

func newSandbox(dir string, readCap int64, refuseHardLinks bool) (*sandbox, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", executor.ErrInvalidRoot, dir, unwrapPath(err))
	}
	return &sandbox{dir: dir, root: r, readCap: readCap, refuseHardLinks: refuseHardLinks}, nil
}

// open returns the held root, or an error once the executor is closed.
func (s *sandbox) open() (*os.Root, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	return s.root, nil
}

// close releases the root; later calls fail with errClosed.
func (s *sandbox) close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.root.Close()
}

// errClosed is what a file tool returns after [Dir.Close].
var errClosed = errors.New("the executor was closed: its file tools no longer run")

// lexical checks a path given by the model without touching the disk and
// returns it cleaned ("." for the root itself). It refuses NUL bytes and
// empty paths (executor.ErrInvalidPath), absolute paths and any ".." component
// (executor.ErrOutsideRoot). A backslash is an ordinary character.
func (s *sandbox) lexical(p string) (string, error) {
	switch {
	case len(p) > executor.MaxPathBytes:
		return "", refusef(executor.ErrInvalidPath, "the path %q is %d bytes; paths are at most %d bytes", cutText(p, 64), len(p), executor.MaxPathBytes)
	case p == "":
		return "", refusef(executor.ErrInvalidPath, "the path is empty; give a path relative to the root folder, or \".\" for the root itself")
	case strings.ContainsRune(p, 0):
		return "", refusef(executor.ErrInvalidPath, "the path %q contains a NUL byte", p)
	case filepath.IsAbs(p) || strings.HasPrefix(p, "/"):
		hint := ""
		if rel, err := filepath.Rel(s.dir, filepath.Clean(p)); err == nil && filepath.IsLocal(rel) {
			hint = fmt.Sprintf(" (for this file, use %q)", filepath.ToSlash(rel))
		}
		return "", refusef(executor.ErrOutsideRoot, "%q is an absolute path; paths are relative to the root folder%s", p, hint)
	}
	depth := 0
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "..":
			return "", refusef(executor.ErrOutsideRoot, "%q has a \"..\" component; paths may not leave the root folder, so \"..\" is never allowed", p)
		case "", ".":
		default:
			depth++
		}
	}
	if depth > executor.MaxPathDepth {
		return "", refusef(executor.ErrInvalidPath, "the path %q has %d components; paths have at most %d", cutText(p, 64), depth, executor.MaxPathDepth)
	}
	return path.Clean(p), nil
}

// resolve follows, component by component, every symbolic link on clean
// (a result of lexical) and returns the path with links replaced by their
// targets. A link that is absolute, or whose target leaves the root, is
// refused with executor.ErrOutsideRoot; more than maxSymlinks links, a path deeper
// than executor.MaxPathDepth once links are followed, or more than maxResolveSteps
// components in all with executor.ErrInvalidPath. Components that do not exist are kept
// as they are (a file about to be written). Enforcement is os.Root's; this
// is for the message and for writing through a link to its target.
//
// Cost: linear in the number of components: the folder reached so far is
// kept open, so each component is one lstat (and one open when it is a
// folder); a ".." from a link's target reopens from the root. At most
// maxResolveSteps components are examined, and ctx is checked at each.
func resolve(ctx context.Context, r *os.Root, display, clean string) (string, error) {
	parts := splitPath(clean)
	var cur []string
	w := &dirWalker{top: r, dir: r}
	defer w.set(nil)
	hops, steps := 0, 0
	link := "" // the last link followed, for messages
	for len(parts) > 0 {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if steps++; steps > maxResolveSteps {
			return "", refusef(executor.ErrInvalidPath, "%q has more than %d components once its symbolic links are followed", cutText(display, 64), maxResolveSteps)
		}
		if len(cur) > executor.MaxPathDepth {
			return "", refusef(executor.ErrInvalidPath, "%q is more than %d folders deep once its symbolic links are followed", cutText(display, 64), executor.MaxPathDepth)
		}
		c := parts[0]
		parts = parts[1:]
		switch c {
		case "", ".":
			continue
		case "..": // only from a link's target
			if len(cur) == 0 {
				return "", refusef(executor.ErrOutsideRoot, "%s, which leads outside the root folder; links are followed only while they stay inside it", linkPhrase(display, link))
			}
			cur = cur[:len(cur)-1]
			w.reopen(cur)
			continue
		}
		if w.dir == nil {
			cur = append(cur, c) // under a name that is not a folder: nothing here exists yet
			continue
		}
		fi, err := w.dir.Lstat(c)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			cur = append(cur, c) // a file, a folder, or nothing yet
			w.descend(c, err == nil && fi.IsDir())
			continue
		}
		next := path.Join(append(cur, c)...)
		if hops++; hops > maxSymlinks {
			return "", refusef(executor.ErrInvalidPath, "%q goes through more than %d symbolic links (a loop?)", display, maxSymlinks)
		}
		target, err := w.dir.Readlink(c)
		if err != nil {
			return "", fsError(display, err)
		}
		if filepath.IsAbs(target) || strings.HasPrefix(target, "/") {
			return "", refusef(executor.ErrOutsideRoot, "%s to an absolute path; only relative links that stay inside the root folder are followed", linkPhrase(display, next))
		}
		link = next
		parts = append(splitPath(target), parts...) // relative to the link's folder, which w.dir still is
	}
	if len(cur) > executor.MaxPathDepth { // the last component made it too deep
		return "", refusef(executor.ErrInvalidPath, "%q is more than %d folders deep once its symbolic links are followed", cutText(display, 64), executor.MaxPathDepth)
	}
	if len(cur) == 0 {
		return ".", nil
	}
	return path.Join(cur...), nil
}

// dirWalker holds open the folder that resolve has reached, so that a
// component costs one lstat rather than a walk from the root. dir is nil
// when the path so far names no folder. It holds at most one descriptor
// besides top's.
type dirWalker struct {
	top, dir *os.Root
}

// set replaces dir, closing the old one unless it is top.
func (w *dirWalker) set(d *os.Root) {
	if w.dir != nil && w.dir != w.top {
		w.dir.Close()
	}
	w.dir = d
}

// descend moves into child c of dir when it is a folder, else to nowhere.
func (w *dirWalker) descend(c string, isDir bool) {
	if !isDir {
		w.set(nil)
		return
	}
	d, err := w.dir.OpenRoot(c)
	if err != nil {
		d = nil
	}
	w.set(d)
}

// reopen moves to cur, opened from top.
func (w *dirWalker) reopen(cur []string) {
	if len(cur) == 0 {
		w.set(w.top)
		return
	}
	d, err := w.top.OpenRoot(path.Join(cur...))
	if err != nil {
		d = nil
	}
	w.set(d)
}

// linkPhrase names the link a path goes through: "\"a\" is a symbolic
// link" or "\"a/b\" goes through the symbolic link \"a\"".
func linkPhrase(display, link string) string {
	if link == path.Clean(display) {
		return fmt.Sprintf("%q is a symbolic link", display)
	}
	return fmt.Sprintf("%q goes through the symbolic link %q", display, link)
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// path checks p lexically and follows its links; see lexical and resolve.
func (s *sandbox) path(ctx context.Context, r *os.Root, p string) (string, error) {
	clean, err := s.lexical(p)
	if err != nil {
		return "", err
	}
	return resolve(ctx, r, p, clean)
}

// openRegular opens rel (a result of path) for reading, refusing anything
// but a regular file, and with refuseHardLinks a file with more than one
// name. It stats first for the message, then opens with O_NONBLOCK (so a
// FIFO swapped in meanwhile cannot block the call) and checks the opened
// file again.
func (s *sandbox) openRegular(r *os.Root, display, rel string) (*os.File, fs.FileInfo, error) {
	fi, err := r.Stat(rel)
	if err != nil {
		return nil, nil, fsError(display, err)
	}
	if err := regular(display, fi); err != nil {
		return nil, nil, err
	}
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fsError(display, err)
	}
	fi, err = f.Stat()
	if err == nil {
		err = regular(display, fi)
	}
	if n := linkCount(fi); err == nil && s.refuseHardLinks && n > 1 {
		err = refusef(executor.ErrOutsideRoot, "%q is a hard link: its file has %d names, and another may be outside the root folder; this run reads only files with one name", display, n)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// regular refuses a file that is not regular, naming what it is.
func regular(display string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	return refusef(executor.ErrNotRegular, "%q is %s, not a regular file", display, words.FileKind(m))
}

// fsError words a file-system error for the model, keeping the sentinel
// that classify needs: fs.ErrNotExist, executor.ErrOutsideRoot, executor.ErrInvalidPath.
func fsError(display string, err error) error {
	inner := unwrapPath(err)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return refusef(fs.ErrNotExist, "%q does not exist in the root folder", display)
	case errors.Is(err, syscall.ENOTDIR):
		return refusef(fs.ErrNotExist, "%q does not exist: a component of it is not a folder", display)
	case errors.Is(err, syscall.ELOOP):
		return refusef(executor.ErrInvalidPath, "%q goes through too many symbolic links", display)
	case strings.Contains(inner.Error(), "escapes"):
		// os.Root's "path escapes from parent": a race with the explicit checks.
		return refusef(executor.ErrOutsideRoot, "%q leads outside the root folder", display)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%q: permission denied", display)
	case errors.Is(err, fs.ErrClosed):
		return errClosed
	}
	return fmt.Errorf("%q: %v", display, inner)
}

// unwrapPath drops a *fs.PathError's operation and absolute path, which
// would leak the host's layout into the prompt.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
