// Package buildinfo is mdap's one reader of the version Go's build
// information records: the program's, as maker --version prints it, and
// a module's, as a journal header records mdap's.
package buildinfo

import "runtime/debug"

// read is debug.ReadBuildInfo, replaced in tests.
var read = debug.ReadBuildInfo

// Program is the main module's version: the one the toolchain stamped (a
// release, or a pseudo-version from the checkout's VCS state), else
// "devel" followed by the first 12 digits of the commit and
// " (modified)" when the build recorded them (-buildvcs=false records
// neither), or "devel" when the binary carries no build information.
// Cost: one read of the build information.
func Program() string {
	info, ok := read()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += " (modified)"
		}
	}
	return v
}

// Module is the version of the module path this program was built with,
// as the build information records it, whether the main module or a
// dependency ("(devel)" for a main module built from a work tree), or
// "unknown" when it records none. Cost: one read of the build
// information.
func Module(path string) string {
	info, ok := read()
	if !ok {
		return "unknown"
	}
	if info.Main.Path == path && info.Main.Version != "" {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return "unknown"
}
