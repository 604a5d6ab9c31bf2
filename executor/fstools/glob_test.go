package fstools

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// matchGlobReference is the former backtracking matcher, exponential on
// repeated "**" but obviously right; FuzzMatchGlob holds the linear
// matcher to it on small inputs.
func matchGlobReference(pattern, name string) bool {
	var rec func(pat, name []string) bool
	rec = func(pat, name []string) bool {
		for len(pat) > 0 {
			if pat[0] == "**" {
				for len(pat) > 0 && pat[0] == "**" {
					pat = pat[1:]
				}
				if len(pat) == 0 {
					return true
				}
				for i := range name {
					if rec(pat, name[i:]) {
						return true
					}
				}
				return false
			}
			if len(name) == 0 {
				return false
			}
			if ok, _ := path.Match(pat[0], name[0]); !ok {
				return false
			}
			pat, name = pat[1:], name[1:]
		}
		return len(name) == 0
	}
	return rec(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func FuzzMatchGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"**", "a/b/c"}, {"**/c", "c"}, {"a/**/c", "a/c"}, {"a/**/c", "a/x/y/c"}, {"a/**", "a"},
		{"*.go", "a/b.go"}, {"a/*", "a/b/c"}, {"[ab]?", "bz"}, {"**/**/x", "x"}, {"", ""}, {"**/a/**/b", "a/b"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		// Small inputs only: the reference is exponential.
		if len(pattern) > 24 || len(name) > 24 || strings.Count(pattern, "**") > 4 {
			return
		}
		assert.Equal(t, matchGlobReference(pattern, name), matchGlob(pattern, name), "%q ~ %q", pattern, name)
	})
}
