// Package atomicfile writes a file whole or not at all: into a temporary
// file beside it, renamed over it once complete, so that a reader never
// sees half a file and a failed write leaves the older file as it was.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// ErrCreate: the temporary file beside path cannot be created (its folder
// is missing or not writable); nothing was written.
var ErrCreate = errors.New("cannot create the file")

// Write writes path with write, whole or not at all, with permissions
// perm (less the umask, as os.WriteFile's). On any error (creating the
// temporary file, write's, closing, renaming) path is left as it was and
// the temporary file is removed. Cost: one extra file created and renamed;
// no fsync (a crash of the machine may leave the older file or the new
// one, never a mix of them). Errors: ErrCreate; write's, the file
// system's; each naming path.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	tmp, err := create(path, perm)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCreate, path, err)
	}
	defer os.Remove(tmp.Name())
	if err := errors.Join(write(tmp), tmp.Close()); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteBytes is Write of data.
func WriteBytes(path string, perm fs.FileMode, data []byte) error {
	return Write(path, perm, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// create makes a new file beside path, ".NAME.RANDOM", with perm less the
// umask (os.CreateTemp would give 0600 whatever perm).
func create(path string, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}
