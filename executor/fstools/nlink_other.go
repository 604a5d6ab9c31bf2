//go:build !unix

package fstools

import "io/fs"

// linkCount returns 1: this platform does not report link counts through
// fs.FileInfo, so WithRefuseHardLinks refuses nothing here.
func linkCount(fs.FileInfo) uint64 { return 1 }
