// Package safefile opens input files without ever blocking: a path that
// names a FIFO, a device, a socket or a folder is refused at once, naming
// what it is, instead of waiting in open(2) for a writer that may never
// come (and holding the process past SIGINT and SIGTERM).
//
// Every input path of mdap (spec files, tasks files, reply files, an MCP
// spec_path) is opened through it, so there is one rule; the wording of
// what a file is comes from internal/words.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/mdap-go/mdap/internal/words"
)

// ErrNotRegular: the path is not a regular file (a FIFO, a device, a
// socket, a folder). The message names what it is.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading with O_NONBLOCK, so that opening a FIFO
// returns at once, then checks the opened file (fstat, so a file swapped
// in between cannot slip by): anything but a regular file is closed and
// refused with ErrNotRegular. On a regular file O_NONBLOCK changes
// nothing. Cost: one open and one fstat. Errors: the file system's (such
// as fs.ErrNotExist), ErrNotRegular.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// A socket fails to open (ENXIO): say what it is.
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, Regular(path, fi.Mode())
		}
		return nil, err
	}
	return check(f, path)
}

// ReadFile reads path as Open opens it, at most max+1 bytes, so that a
// caller bounding its input to max sees a file over it (len > max)
// without reading it whole. Errors are Open's and the read's.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max+1))
}

// OpenIn is Open for a name inside root (os.Root's rules: no escape
// through .. or symbolic links).
func OpenIn(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if fi, serr := root.Stat(name); serr == nil && !fi.Mode().IsRegular() {
			return nil, Regular(name, fi.Mode())
		}
		return nil, err
	}
	return check(f, name)
}

func check(f *os.File, name string) (*os.File, error) {
	fi, err := f.Stat()
	if err == nil {
		err = Regular(name, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Regular returns nil for a regular file's mode, else ErrNotRegular
// naming name and what it is.
func Regular(name string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	return fmt.Errorf("%w: %s is %s; give a regular file", ErrNotRegular, name, words.FileKind(m))
}
