package words

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPlural(t *testing.T) {
	for n, want := range map[string]string{
		"1 step": Plural(1, "step"), "2 steps": Plural(2, "step"), "0 steps": Plural(0, "step"),
		"3 replies": Plural(3, "reply"), "1 reply": Plural(1, "reply"), "2 keys": Plural(2, "key"),
		"2 boxes": Plural(2, "box"), "2 matches": Plural(2, "match"), "4 buses": Plural(4, "bus"),
		"2 days": Plural(2, "day"), "-1 runs": Plural(-1, "run"),
	} {
		assert.Equal(t, n, want)
	}
}

func TestFileKind(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		fs.ModeDir:                        "a folder",
		fs.ModeNamedPipe:                  "a named pipe (FIFO)",
		fs.ModeDevice | fs.ModeCharDevice: "a character device",
		fs.ModeDevice:                     "a device",
		fs.ModeSocket:                     "a socket",
		fs.ModeSymlink:                    "a symbolic link",
		0:                                 "a regular file",
		fs.ModeIrregular:                  "a special file",
	} {
		assert.Equal(t, want, FileKind(m), "%v", m)
	}
}

// TestPrefix: Prefix keeps at most n bytes and never splits a character
// (é is 2 bytes, 😀 4).
func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{{"abc", 5, "abc"}, {"abc", 3, "abc"}, {"abc", 2, "ab"}, {"abc", 0, ""}, {"abc", -1, ""},
		{"aé", 2, "a"}, {"aé", 3, "aé"}, {"😀x", 3, ""}, {"😀x", 4, "😀"}, {"x😀", 4, "x"}} {
		assert.Equal(t, c.want, Prefix(c.s, c.n), "%q %d", c.s, c.n)
	}
}
