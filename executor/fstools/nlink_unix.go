//go:build unix

package fstools

import (
	"io/fs"
	"syscall"
)

// linkCount returns how many names (hard links) fi's file has; 1 when it
// cannot tell.
func linkCount(fi fs.FileInfo) uint64 {
	if fi == nil {
		return 1
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
