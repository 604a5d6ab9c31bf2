//go:build unix

package fstools

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const secret = "TOP SECRET: outside the root"

// fixture is a temp folder holding a root and, beside it, an outside
// folder whose files no call may read or change.
type fixture struct {
	base, root, outside string
}

// newFixture builds:
//
//	outside/secret.txt, outside/dir/deep.txt
//	root/hello.txt ("hello\nworld\n"), root/sub/a.txt, root/sub/b.go, root/sub/deeper/c.txt
//	root/big.txt (text, 20 KiB), root/bin.dat (binary)
//	root/link_out.txt -> ../outside/secret.txt     (relative, leads out)
//	root/link_abs.txt -> <abs>/outside/secret.txt   (absolute)
//	root/link_abs_in.txt -> <abs>/root/hello.txt    (absolute, even if inside)
//	root/linkdir -> ../outside                      (directory link out)
//	root/a/inner -> ../../outside                   (intermediate directory link out)
//	root/link_in.txt -> hello.txt, root/linksub -> sub (links inside: allowed)
//	root/dangling_out -> ../outside/new.txt        (dangling, leads out)
//	root/chain -> linkdir/secret.txt                (a chain of links, leads out)
//	root/sub/up_in -> ../hello.txt                  (a link with "..", inside: allowed)
//	root/up -> ..                                   (the root's parent)
//	root/loop1 -> loop2, root/loop2 -> loop1
//	root/fifo                                       (a named pipe)
func newFixture(t testing.TB) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := fixture{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	write := func(p, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	link := func(target, name string) {
		require.NoError(t, os.Symlink(target, filepath.Join(f.root, name)))
	}
	write(filepath.Join(f.outside, "secret.txt"), secret)
	write(filepath.Join(f.outside, "dir", "deep.txt"), secret)
	write(filepath.Join(f.root, "hello.txt"), "hello\nworld\n")
	write(filepath.Join(f.root, "sub", "a.txt"), "alpha\nneedle one\n")
	write(filepath.Join(f.root, "sub", "b.go"), "package b\n// needle two\n")
	write(filepath.Join(f.root, "sub", "deeper", "c.txt"), "Needle three\n")
	write(filepath.Join(f.root, "big.txt"), strings.Repeat("0123456789abcdef needle\n", 20<<10/24))
	write(filepath.Join(f.root, "bin.dat"), "needle\x00\x01\x02")
	require.NoError(t, os.MkdirAll(filepath.Join(f.root, "a"), 0o755))
	link("../outside/secret.txt", "link_out.txt")
	link(filepath.Join(f.outside, "secret.txt"), "link_abs.txt")
	link(filepath.Join(f.root, "hello.txt"), "link_abs_in.txt")
	link("../outside", "linkdir")
	link("../../outside", "a/inner")
	link("hello.txt", "link_in.txt")
	link("sub", "linksub")
	link("../outside/new.txt", "dangling_out")
	link("linkdir/secret.txt", "chain")
	link("../hello.txt", "sub/up_in")
	link("..", "up")
	link("loop2", "loop1")
	link("loop1", "loop2")
	require.NoError(t, syscall.Mkfifo(filepath.Join(f.root, "fifo"), 0o644))
	return f
}

// fileState is what a snapshot remembers of one entry.
type fileState struct {
	mode    fs.FileMode
	mtime   time.Time
	content string
	link    string
}

// snapshot records every entry under dir, without following links.
func snapshot(t testing.TB, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		st := fileState{mode: fi.Mode(), mtime: fi.ModTime()}
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			st.content = string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			st.link, err = os.Readlink(p)
			require.NoError(t, err)
		}
		if fi.IsDir() {
			st.mtime = time.Time{} // reading a folder does not change it; creating in it would show as a new entry
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = st
		return nil
	})
	require.NoError(t, err)
	return out
}
