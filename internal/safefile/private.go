package safefile

import (
	"errors"
	"fmt"
	"os"
)

// ErrNotPrivate: a folder that holds secrets or journals may be changed
// by another user (it is writable by group or others, or another user
// owns it), or is not a folder.
var ErrNotPrivate = errors.New("not a private folder")

// PrivateDir makes path (and its parents) with mode 0700 if it is
// missing, then checks the folder (following a symbolic link): it must be
// a folder owned by this process's user (on Unix) and writable by no one
// else, since whoever may write in it can replace or remove what mdap
// keeps there. It reads and writes nothing inside. Cost: a mkdir and a
// stat. Errors: the file system's, ErrNotPrivate naming the folder, what
// is wrong and the fix.
func PrivateDir(path string) error {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a folder", ErrNotPrivate, path)
	case !ownedByMe(fi):
		return fmt.Errorf("%w: %s belongs to another user, who could change what is kept there; use a folder of your own", ErrNotPrivate, path)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: %s may be written by others (mode %s), who could change what is kept there; run chmod go-w %s", ErrNotPrivate, path, fi.Mode().Perm(), path)
	}
	return nil
}
