package safefile

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRefusesAtOnce: a FIFO with no writer, a device, a socket and a
// folder are refused without blocking, naming what they are; a regular
// file opens.
func TestOpenRefusesAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err == nil {
		defer l.Close()
	}
	reg := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(reg, []byte("x"), 0o644))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()

	cases := map[string]string{fifo: "a named pipe (FIFO)", "/dev/null": "a character device", dir: "a folder"}
	if l != nil {
		cases[sock] = "a socket"
	}
	for path, kind := range cases {
		done := make(chan error, 1)
		go func() {
			f, err := Open(path)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			require.ErrorIs(t, err, ErrNotRegular, path)
			assert.Contains(t, err.Error(), kind)
			assert.Contains(t, err.Error(), path)
		case <-time.After(10 * time.Second):
			t.Fatalf("Open(%s) blocked", path)
		}
	}
	_, err = OpenIn(root, "fifo")
	require.ErrorIs(t, err, ErrNotRegular)
	f, err := Open(reg)
	require.NoError(t, err)
	f.Close()
	f, err = OpenIn(root, "f")
	require.NoError(t, err)
	f.Close()
	_, err = Open(filepath.Join(dir, "missing"))
	require.True(t, errors.Is(err, fs.ErrNotExist))
}
