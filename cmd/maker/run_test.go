package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBinaryRunFindVersion(t *testing.T) {
	t.Parallel()
	// As the README writes it, from the module's root.
	c := start(t, nil, "run", "../../testdata/spec/find-version.json", "--progress", "off")
	require.Equal(t, 0, c.wait(t, time.Minute), "stderr: %s", &c.stderr)
	out := c.stdout.String()
	assert.Contains(t, out, "solved true")
	assert.Contains(t, out, `state: {"file":"src/version.go","version":"1.4.2"}`)
	assert.Contains(t, out, "tool calls 2, denied 0")
	assert.Contains(t, out, filepath.Join("testdata", "spec", "repo"), "the spec's root, inside its folder")
}

func runJSON(t *testing.T, args ...string) (int, specSummary, string) {
	t.Helper()
	code, out, stderr := cli(t, append([]string{"run", "--json", "--progress", "off"}, args...)...)
	var s specSummary
	if out != "" {
		require.NoError(t, json.Unmarshal([]byte(out), &s), "stdout %q", out)
	}
	return code, s, stderr
}

func TestRunPolicyDecidesWhatRuns(t *testing.T) {
	t.Parallel()
	spec := specFile(t, "write-denied.json")
	root := t.TempDir()
	code, s, stderr := runJSON(t, spec, "--root", root, "--p", "0.9", "--seed", "7")
	require.Equal(t, 0, code, stderr)
	assert.True(t, s.Solved)
	assert.Equal(t, 1, s.ToolCalls)
	assert.Equal(t, 1, s.Denied, "read-only by default: the write is denied")
	assert.JSONEq(t, `{"wrote":false}`, string(s.State))
	assert.NoFileExists(t, filepath.Join(root, "note.txt"))

	// With file_write allowed, write-note writes, and says so truthfully.
	code, s, stderr = runJSON(t, specFile(t, "write-note.json"), "--root", root, "--tools", "read_only,write_file", "--p", "0.9", "--seed", "7")
	require.Equal(t, 0, code, stderr)
	assert.Zero(t, s.Denied)
	assert.Contains(t, s.Tools, "write_file")
	assert.JSONEq(t, `{"wrote":true}`, string(s.State))
	b, err := os.ReadFile(filepath.Join(root, "note.txt"))
	require.NoError(t, err)
	assert.Equal(t, "written by a microagent", string(b))
}

func TestRunJournalResumes(t *testing.T) {
	t.Parallel()
	j := filepath.Join(t.TempDir(), "run.jsonl")
	spec := specFile(t, "find-version.json")
	code, whole, _ := runJSON(t, spec, "--journal", j, "--p", "0.8", "--seed", "3")
	require.Equal(t, 0, code)
	// Cut the journal after its first step (header plus one line).
	lines := strings.SplitAfter(string(mustRead(t, j)), "\n")
	require.NoError(t, os.WriteFile(j, []byte(lines[0]+lines[1]), 0o644))
	asCrashed(t, j)
	code, resumed, stderr := runJSON(t, spec, "--journal", j, "--resume", "--p", "0.8", "--seed", "3")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 1, resumed.Resumed)
	assert.Equal(t, whole.State, resumed.State)
	assert.Equal(t, whole.Samples, resumed.Samples)
	assert.Equal(t, whole.Steps, resumed.Steps)

	code, _, stderr = runJSON(t, spec, "--journal", j, "--resume", "--p", "0.8", "--seed", "4")
	assert.Equal(t, 2, code, "another seed is another run")
	assert.Contains(t, stderr, "seed=3")
}

func TestRunNotSolvedExits1(t *testing.T) {
	t.Parallel()
	// A model that is never right within the budget: the step is undecided.
	code, s, stderr := runJSON(t, specFile(t, "find-version.json"), "--p", "0.05", "--wrong-answers", "64", "--max-samples", "6")
	assert.Equal(t, 1, code)
	assert.False(t, s.Solved)
	assert.Contains(t, s.Error, "undecided")
	assert.Contains(t, stderr, "undecided")
}

func TestRunUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"system": "x"}`), 0o644))
	escape := filepath.Join(dir, "escape.json")
	require.NoError(t, os.WriteFile(escape, []byte(`{"system": "x", "answer": {}, "root": "../.."}`), 0o644))
	noScript := filepath.Join(dir, "noscript.json")
	require.NoError(t, os.WriteFile(noScript, []byte(`{"system": "x", "answer": {"type": "object"}}`), 0o644))
	spec := specFile(t, "find-version.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "accepts 1 arg"},
		{[]string{"run", filepath.Join(dir, "nope.json")}, "no such file"},
		{[]string{"run", bad}, `"answer" is missing`},
		{[]string{"run", escape}, `"root"`},
		{[]string{"run", spec, "--tools", "shell"}, "--tools"},
		{[]string{"run", spec, "--root", filepath.Join(dir, "nope")}, "--root"},
		{[]string{"run", spec, "--k", "0"}, `"0" for "--k" flag`},
		{[]string{"run", noScript, "--journal", filepath.Join(dir, "j.jsonl")}, `"script" is missing`},
		{[]string{"run", spec, "--max-steps", "-1", "--journal", filepath.Join(dir, "j.jsonl")}, "--max-steps -1: use 1 or more"},
		{[]string{"run", spec, "--tool-declaration", "sideways", "--journal", filepath.Join(dir, "j.jsonl")}, `--tool-declaration "sideways"`},
		{[]string{"run", spec, "--resume"}, "--resume needs --journal"},
	} {
		code, out, stderr := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.Empty(t, out, "%v", c.args)
		assert.NoFileExists(t, filepath.Join(dir, "j.jsonl"), "%v: a refused run writes no journal", c.args)
	}
}
