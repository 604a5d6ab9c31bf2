//go:build unix

package fstools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileCase is one intent of the hostile table and what it must give.
type hostileCase struct {
	name   string
	e      *executor.Executor
	tool   string
	args   map[string]any
	status intent.Status
	reason intent.Reason
	words  []string // substrings of Content
}

// hostileCases are intents that try to leave the root, read what is not a
// file, write without permission, or call what does not exist, over f
// with a read-only and a read-write executor.
func hostileCases(t *testing.T, f fixture) []hostileCase {
	ro := newExec(t, f.root, WithReadCap(4<<10))
	rw := newExec(t, f.root, WithReadCap(4<<10), executor.WithPolicy(rwPolicy()))
	absSecret := filepath.Join(f.outside, "secret.txt")
	absHello := filepath.Join(f.root, "hello.txt")
	type args = map[string]any
	return []hostileCase{
		// Traversal in every spelling.
		{"dotdot", ro, "read_file", args{"path": "../outside/secret.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{`".."`}},
		{"dotdot inside then out", ro, "read_file", args{"path": "sub/../../outside/secret.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{`".."`}},
		{"a/../../x", ro, "read_file", args{"path": "a/../../x"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{`".."`}},
		{"dot dotdot", ro, "read_file", args{"path": "./../outside/secret.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{`".."`}},
		{"dotdot alone", ro, "list_dir", args{"path": ".."}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{`".."`}},
		{"dotdot harmless still refused", ro, "read_file", args{"path": "sub/../hello.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{"never allowed"}},
		{"backslash is a name", ro, "read_file", args{"path": `..\outside\secret.txt`}, intent.StatusError, intent.ReasonNotFound, []string{"does not exist"}},
		{"url-encoded is a name", ro, "read_file", args{"path": "%2e%2e/outside/secret.txt"}, intent.StatusError, intent.ReasonNotFound, []string{"does not exist"}},
		{"grep dotdot", ro, "grep", args{"pattern": "SECRET", "paths": []any{"sub", "../outside"}}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{`".."`}},
		{"glob dotdot base", ro, "glob", args{"pattern": "*", "path": "../outside"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		// Absolute paths.
		{"absolute outside", ro, "read_file", args{"path": absSecret}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{"absolute path"}},
		{"absolute etc", ro, "read_file", args{"path": "/etc/passwd"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{"absolute path"}},
		{"absolute inside", ro, "read_file", args{"path": absHello}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{`use "hello.txt"`}},
		{"absolute list", ro, "list_dir", args{"path": "/"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		// Symbolic links.
		{"file link out", ro, "read_file", args{"path": "link_out.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{"symbolic link"}},
		{"absolute file link", ro, "read_file", args{"path": "link_abs.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{"link to an absolute path"}},
		{"absolute link even inside", ro, "read_file", args{"path": "link_abs_in.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{"only relative links"}},
		{"dir link out", ro, "read_file", args{"path": "linkdir/secret.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{"symbolic link"}},
		{"intermediate dir link out", ro, "read_file", args{"path": "a/inner/dir/deep.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{"symbolic link"}},
		{"list dir link out", ro, "list_dir", args{"path": "linkdir"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"grep dir link out", ro, "grep", args{"pattern": "SECRET", "paths": []any{"linkdir"}}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"glob dir link out", ro, "glob", args{"pattern": "**", "path": "a/inner"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"link chain", ro, "read_file", args{"path": "chain"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{`"chain" goes through the symbolic link "linkdir"`}},
		{"link to parent", ro, "list_dir", args{"path": "up"}, intent.StatusDenied, intent.ReasonOutsideRoot, []string{`"up" is a symbolic link`}},
		{"link to parent then down", ro, "read_file", args{"path": "up/outside/secret.txt"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"link loop", ro, "read_file", args{"path": "loop1"}, intent.StatusDenied, intent.ReasonBadPath, []string{"symbolic links"}},
		// NUL bytes, non-regular files, huge files.
		{"nul byte", ro, "read_file", args{"path": "hello.txt\x00../../outside/secret.txt"}, intent.StatusDenied, intent.ReasonBadPath, []string{"NUL"}},
		{"nul byte list", ro, "list_dir", args{"path": "\x00"}, intent.StatusDenied, intent.ReasonBadPath, []string{"NUL"}},
		{"fifo read", ro, "read_file", args{"path": "fifo"}, intent.StatusDenied, intent.ReasonNotRegular, []string{"named pipe"}},
		{"fifo grep", ro, "grep", args{"pattern": "x", "paths": []any{"fifo"}}, intent.StatusDenied, intent.ReasonNotRegular, []string{"named pipe"}},
		{"folder read", ro, "read_file", args{"path": "sub"}, intent.StatusDenied, intent.ReasonNotRegular, []string{"a folder"}},
		{"huge file capped", ro, "read_file", args{"path": "big.txt"}, intent.StatusOK, "", []string{"truncated", "4096 bytes"}},
		// Writes: withheld by the read-only policy, sandboxed when allowed.
		{"write read-only policy", ro, "write_file", args{"path": "new.txt", "content": "x"}, intent.StatusDenied, intent.ReasonNotAllowed, []string{"file_write", "--tools file_read,search,semantic_search,file_write"}},
		{"write escape dotdot", rw, "write_file", args{"path": "../outside/evil.txt", "content": "x"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"write escape absolute", rw, "write_file", args{"path": filepath.Join(f.outside, "evil.txt"), "content": "x"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"write through dir link", rw, "write_file", args{"path": "linkdir/evil.txt", "content": "x"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"write through file link", rw, "write_file", args{"path": "link_out.txt", "content": "x"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"write dangling link out", rw, "write_file", args{"path": "dangling_out", "content": "x"}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"write intermediate link", rw, "write_file", args{"path": "a/inner/evil.txt", "content": "x", "create_dirs": true}, intent.StatusDenied, intent.ReasonOutsideRoot, nil},
		{"write fifo", rw, "write_file", args{"path": "fifo", "content": "x"}, intent.StatusDenied, intent.ReasonNotRegular, []string{"named pipe"}},
		{"write root itself", rw, "write_file", args{"path": ".", "content": "x"}, intent.StatusDenied, intent.ReasonNotRegular, nil},
		{"write nul", rw, "write_file", args{"path": "x\x00y", "content": "x"}, intent.StatusDenied, intent.ReasonBadPath, nil},
		// Names that do not exist or mimic others.
		{"unknown tool", ro, "delete_everything", args{}, intent.StatusDenied, intent.ReasonUnknownTool, []string{"Tools you can call: list_dir, read_file, glob, grep, list_tool_categories", "withheld"}},
		{"category name file_write", ro, "file_write", args{"path": "x", "content": "y"}, intent.StatusDenied, intent.ReasonUnknownTool, []string{"is a category, not a tool"}},
		{"category name bash", ro, "bash", args{"command": "rm -rf /"}, intent.StatusDenied, intent.ReasonUnknownTool, []string{"is a category, not a tool"}},
		{"case mimic", ro, "Read_File", args{"path": "hello.txt"}, intent.StatusDenied, intent.ReasonUnknownTool, []string{`Did you mean "read_file"?`}},
		{"trailing space", ro, "read_file ", args{"path": "hello.txt"}, intent.StatusDenied, intent.ReasonUnknownTool, []string{`Did you mean "read_file"?`}},
		{"empty name", ro, "", args{}, intent.StatusDenied, intent.ReasonUnknownTool, nil},
		{"known but unavailable", ro, "run_command", args{"command": "id"}, intent.StatusDenied, intent.ReasonUnavailable, []string{"bash", "cannot run it"}},
		// Arguments.
		{"wrong type", ro, "read_file", args{"path": 42}, intent.StatusDenied, intent.ReasonInvalidArgs, []string{"arguments.path: got number, want string"}},
		{"missing required", ro, "read_file", args{}, intent.StatusDenied, intent.ReasonInvalidArgs, []string{"missing property 'path'", "read_file takes path (string, required)"}},
		{"extra argument", ro, "read_file", args{"path": "hello.txt", "mode": "w"}, intent.StatusDenied, intent.ReasonInvalidArgs, []string{"additional properties 'mode' not allowed"}},
		{"every problem at once", ro, "read_file", args{"path": []any{"x"}, "offset": "first", "limit": 0, "x": 1},
			intent.StatusDenied, intent.ReasonInvalidArgs, []string{"4 problems", "arguments.path: got array", "arguments.offset: got string", "arguments.limit: minimum", "'x' not allowed"}},
		{"empty path", ro, "read_file", args{"path": ""}, intent.StatusDenied, intent.ReasonInvalidArgs, []string{"arguments.path"}},
		{"bad regexp", ro, "grep", args{"pattern": "(unclosed"}, intent.StatusDenied, intent.ReasonInvalidArgs, []string{"RE2"}},
		{"bad glob", ro, "glob", args{"pattern": "[a-"}, intent.StatusDenied, intent.ReasonInvalidArgs, []string{"malformed"}},
		{"write bad args", rw, "write_file", args{"path": "new.txt"}, intent.StatusDenied, intent.ReasonInvalidArgs, []string{"missing property 'content'"}},
	}
}

// TestHostileIntents runs the hostile table. Each intent is refused (or,
// for the huge file, capped) with the expected reason and words, and
// nothing outside the root, nor inside it, changes.
func TestHostileIntents(t *testing.T) {
	f := newFixture(t)
	cases := hostileCases(t, f)
	require.GreaterOrEqual(t, len(cases), 30)

	outsideBefore := snapshot(t, f.outside)
	rootBefore := snapshot(t, f.root)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			obs, err := c.e.Execute(ctx, intent.ToolIntent{Tool: c.tool, Args: c.args})
			require.NoError(t, err)
			assert.Equal(t, c.status, obs.Status, obs.Content)
			assert.Equal(t, c.reason, obs.Reason, obs.Content)
			for _, w := range c.words {
				assert.Contains(t, obs.Content, w)
			}
			assert.NotContains(t, obs.Content, "TOP SECRET")
			if !strings.Contains(fmt.Sprint(c.args), f.base) {
				assert.NotContains(t, obs.Content, f.base, "no host path in the message")
			}
			if c.status == intent.StatusDenied {
				assert.True(t, obs.Denied())
			}
		})
	}
	assert.Equal(t, outsideBefore, snapshot(t, f.outside), "nothing outside the root changes")
	assert.Equal(t, rootBefore, snapshot(t, f.root), "no denied call changes the root")
	entries, err := os.ReadDir(f.outside)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no file appears outside the root")
}
