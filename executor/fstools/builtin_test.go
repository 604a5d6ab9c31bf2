//go:build unix

package fstools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFile(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root, WithReadCap(4<<10))

	obs := run(t, e, "read_file", args{"path": "hello.txt"})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "hello\nworld\n", obs.Content)
	assert.True(t, obs.ReadOnly)
	assert.False(t, obs.Truncated)

	assert.Equal(t, "world\n", run(t, e, "read_file", args{"path": "hello.txt", "offset": 2}).Content)
	obs = run(t, e, "read_file", args{"path": "hello.txt", "limit": 1})
	assert.Equal(t, "hello\n[lines 1-1 of 2 shown; call read_file with offset=2 for more]", obs.Content)
	assert.False(t, obs.Truncated, "a limit the caller chose is not truncation")
	assert.Contains(t, run(t, e, "read_file", args{"path": "hello.txt", "offset": 9}).Content, "has 2 lines; offset 9 is past the end")

	// Links inside the root are followed.
	assert.Equal(t, "hello\nworld\n", run(t, e, "read_file", args{"path": "link_in.txt"}).Content)
	assert.Equal(t, "alpha\nneedle one\n", run(t, e, "read_file", args{"path": "linksub/a.txt"}).Content)
	assert.Equal(t, "alpha\nneedle one\n", run(t, e, "read_file", args{"path": "./sub//a.txt"}).Content)
	assert.Equal(t, "hello\nworld\n", run(t, e, "read_file", args{"path": "sub/up_in"}).Content, "a link with .. that stays inside")

	obs = run(t, e, "read_file", args{"path": "bin.dat"})
	assert.True(t, obs.OK())
	assert.Contains(t, obs.Content, "binary file")

	require.NoError(t, writeFile(filepath.Join(f.root, "empty.txt"), ""))
	obs = run(t, e, "read_file", args{"path": "empty.txt"})
	assert.True(t, obs.OK())
	assert.Empty(t, obs.Content)

	obs = run(t, e, "read_file", args{"path": "big.txt"})
	assert.True(t, obs.Truncated)
	assert.LessOrEqual(t, len(obs.Content), 4<<10+200)
	assert.Contains(t, obs.Content, "[truncated: big.txt is 20472 bytes; only the first 4096 bytes are read]")
	obs = run(t, e, "read_file", args{"path": "big.txt", "offset": 1000})
	assert.True(t, obs.Truncated)
	assert.Contains(t, obs.Content, "only its first 4096 bytes can be read")

	obs = run(t, e, "read_file", args{"path": "missing.txt"})
	assert.Equal(t, intent.ReasonNotFound, obs.Reason)
	obs = run(t, e, "read_file", args{"path": "hello.txt/x"})
	assert.Equal(t, intent.ReasonNotFound, obs.Reason)
}

func TestListDir(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)
	obs := run(t, e, "list_dir", nil)
	require.True(t, obs.OK(), obs.Content)
	for _, line := range []string{"a/", "sub/", "hello.txt (12 bytes)", "link_in.txt@", "linkdir@", "fifo|"} {
		assert.Contains(t, strings.Split(obs.Content, "\n"), line)
	}
	assert.Equal(t, "a.txt (17 bytes)\nb.go (24 bytes)\ndeeper/\nup_in@\n", run(t, e, "list_dir", args{"path": "sub"}).Content)
	assert.Equal(t, run(t, e, "list_dir", args{"path": "sub"}).Content, run(t, e, "list_dir", args{"path": "linksub"}).Content)
	obs = run(t, e, "list_dir", args{"path": "hello.txt"})
	assert.Equal(t, intent.ReasonToolError, obs.Reason)
	assert.Contains(t, obs.Content, "not a folder")
	require.NoError(t, os.Mkdir(filepath.Join(f.root, "void"), 0o755))
	assert.Contains(t, run(t, e, "list_dir", args{"path": "void"}).Content, "empty folder")
}

func TestGlob(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root)
	obs := run(t, e, "glob", args{"pattern": "**/*.txt"})
	require.True(t, obs.OK(), obs.Content)
	got := strings.Fields(obs.Content)
	assert.Subset(t, got, []string{"hello.txt", "big.txt", "sub/a.txt", "sub/deeper/c.txt", "link_in.txt"})
	assert.NotContains(t, obs.Content, "secret", "links are not followed")
	assert.NotContains(t, obs.Content, "deep.txt")

	assert.Equal(t, "sub/b.go\n", run(t, e, "glob", args{"pattern": "*.go", "path": "sub"}).Content)
	assert.Equal(t, "sub/deeper/c.txt\n", run(t, e, "glob", args{"pattern": "**/c.txt", "path": "sub"}).Content)
	assert.Equal(t, "sub/deeper/\n", run(t, e, "glob", args{"pattern": "deep*", "path": "sub"}).Content)
	assert.Contains(t, run(t, e, "glob", args{"pattern": "*.rs"}).Content, "no path under . matches")
	assert.Equal(t, intent.ReasonToolError, run(t, e, "glob", args{"pattern": "*", "path": "hello.txt"}).Reason)

	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"**", "a/b/c", true}, {"**/c", "c", true}, {"a/**/c", "a/c", true}, {"a/**/c", "a/x/y/c", true},
		{"a/**", "a", true}, {"*.go", "a/b.go", false}, {"a/*", "a/b/c", false}, {"[ab]?", "bz", true},
	} {
		assert.Equal(t, c.want, matchGlob(c.pattern, c.name), "%s ~ %s", c.pattern, c.name)
	}
}

func TestGrep(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root, WithReadCap(4<<10))

	obs := run(t, e, "grep", args{"pattern": "needle (one|two)", "paths": []any{"sub", "hello.txt"}})
	require.True(t, obs.OK(), obs.Content)
	assert.Equal(t, "sub/a.txt:2: needle one\nsub/b.go:2: // needle two\n", obs.Content)

	obs = run(t, e, "grep", args{"pattern": "needle three", "case_insensitive": true, "paths": []any{"sub"}})
	assert.Equal(t, "sub/deeper/c.txt:1: Needle three\n", obs.Content)
	assert.Equal(t, "sub/b.go:2: // needle two\n", run(t, e, "grep", args{"pattern": "needle", "glob": "*.go"}).Content)
	assert.Equal(t, "sub/a.txt:2: needle one\n", run(t, e, "grep", args{"pattern": "needle", "glob": "sub/*.txt"}).Content)
	assert.Equal(t, "hello.txt:2: world\n", run(t, e, "grep", args{"pattern": "wor", "paths": []any{"hello.txt", "hello.txt"}}).Content, "a file named twice is searched once")
	assert.Contains(t, run(t, e, "grep", args{"pattern": "zzz"}).Content, "no line matches")

	obs = run(t, e, "grep", args{"pattern": "SECRET"})
	assert.Contains(t, obs.Content, "no line matches", "links out are never followed: %s", obs.Content)
	assert.NotContains(t, run(t, e, "grep", args{"pattern": "needle"}).Content, "bin.dat", "binary files are skipped")

	obs = run(t, e, "grep", args{"pattern": "needle", "paths": []any{"big.txt"}, "max_results": 3})
	assert.True(t, obs.Truncated)
	assert.Equal(t, 3, strings.Count(obs.Content, "big.txt:"), obs.Content)
	assert.Contains(t, obs.Content, "stopped after 3 matching lines")

	obs = run(t, e, "grep", args{"pattern": "needle", "paths": []any{"big.txt"}, "max_results": 1000})
	assert.True(t, obs.Truncated)
	assert.Contains(t, obs.Content, "only the first 4096 bytes of 1 file(s) were searched: big.txt")

	long := strings.Repeat("x", 1000) + "needle"
	require.NoError(t, writeFile(filepath.Join(f.root, "long.txt"), long))
	obs = run(t, e, "grep", args{"pattern": "x", "paths": []any{"long.txt"}})
	assert.Contains(t, obs.Content, "[line cut]")
	assert.Less(t, len(obs.Content), 400)
}

func TestWriteFile(t *testing.T) {
	f := newFixture(t)
	e := newExec(t, f.root, executor.WithPolicy(rwPolicy()), WithReadCap(1<<10))
	outsideBefore := snapshot(t, f.outside)

	obs := run(t, e, "write_file", args{"path": "new.txt", "content": "fresh\n"})
	require.True(t, obs.OK(), obs.Content)
	assert.False(t, obs.ReadOnly)
	assert.Equal(t, "created new.txt (6 bytes)", obs.Content)
	b, err := os.ReadFile(filepath.Join(f.root, "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "fresh\n", string(b))

	require.NoError(t, os.Chmod(filepath.Join(f.root, "new.txt"), 0o600))
	obs = run(t, e, "write_file", args{"path": "new.txt", "content": "again"})
	assert.Equal(t, "replaced new.txt (5 bytes)", obs.Content)
	fi, err := os.Stat(filepath.Join(f.root, "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "permissions kept")

	obs = run(t, e, "write_file", args{"path": "x/y/z.txt", "content": "deep"})
	assert.Equal(t, intent.ReasonNotFound, obs.Reason)
	assert.Contains(t, obs.Content, "create_dirs=true")
	obs = run(t, e, "write_file", args{"path": "x/y/z.txt", "content": "deep", "create_dirs": true})
	require.True(t, obs.OK(), obs.Content)
	b, err = os.ReadFile(filepath.Join(f.root, "x", "y", "z.txt"))
	require.NoError(t, err)
	assert.Equal(t, "deep", string(b))

	// Through a link inside the root: the target changes, the link stays.
	obs = run(t, e, "write_file", args{"path": "link_in.txt", "content": "via link"})
	require.True(t, obs.OK(), obs.Content)
	b, _ = os.ReadFile(filepath.Join(f.root, "hello.txt"))
	assert.Equal(t, "via link", string(b))
	target, err := os.Readlink(filepath.Join(f.root, "link_in.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello.txt", target)

	// A hard link to a file outside is replaced, not written through.
	require.NoError(t, os.Link(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.root, "hard.txt")))
	obs = run(t, e, "write_file", args{"path": "hard.txt", "content": "overwritten?"})
	require.True(t, obs.OK(), obs.Content)
	b, _ = os.ReadFile(filepath.Join(f.outside, "secret.txt"))
	assert.Equal(t, secret, string(b))

	obs = run(t, e, "write_file", args{"path": "big.txt", "content": strings.Repeat("x", 2<<10)})
	assert.Equal(t, intent.ReasonInvalidArgs, obs.Reason)
	assert.Contains(t, obs.Content, "at most 1024")

	obs = run(t, e, "write_file", args{"path": "sub", "content": "x"})
	assert.Equal(t, intent.ReasonNotRegular, obs.Reason)
	obs = run(t, e, "write_file", args{"path": "../outside/secret.txt", "content": "x"})
	assert.Equal(t, intent.ReasonOutsideRoot, obs.Reason)

	assert.Equal(t, outsideBefore, snapshot(t, f.outside))
	entries, err := os.ReadDir(f.root)
	require.NoError(t, err)
	for _, en := range entries {
		assert.NotContains(t, en.Name(), ".tmp-", "no temporary file is left")
	}
}
