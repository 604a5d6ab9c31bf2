package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeSpec writes a copy of testdata/spec/NAME with fields replaced
// (nil deletes one) into dir, and returns its path.
func writeSpec(t *testing.T, dir, name string, fields map[string]any) string {
	t.Helper()
	b, err := os.ReadFile(specFile(t, name))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for k, v := range fields {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err = json.Marshal(m)
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// TestBinaryRunRefusesBadSpecsBeforeAnyCall: each load-time refusal exits
// 2, names the field, and writes nothing (no journal, no file under the
// root, no stdout).
func TestBinaryRunRefusesBadSpecsBeforeAnyCall(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		spec  func(dir string) string
		args  []string
		words []string
	}{
		"misspelled tool": {
			spec: func(dir string) string {
				return writeSpec(t, dir, "find-version.json", map[string]any{"tools": []string{"grep", "read_files"}, "root": nil})
			},
			words: []string{`"tools"`, `"read_files"`, "read_file"},
		},
		"tool the policy always denies": {
			spec:  func(dir string) string { return writeSpec(t, dir, "write-note.json", nil) },
			words: []string{`"tools"`, `"write_file"`, "always denies", "--tools"},
		},
		"script that breaks the answer contract": {
			spec: func(dir string) string {
				return writeSpec(t, dir, "find-version.json", map[string]any{"root": nil, "script": []any{map[string]any{"state": map[string]any{"version": 1}, "done": "yes"}}})
			},
			words: []string{`"script"`, "step 0", "/done"},
		},
		"sim without a script": {
			spec: func(dir string) string {
				return writeSpec(t, dir, "find-version.json", map[string]any{"script": nil, "root": nil})
			},
			words: []string{`"script"`, "--model sim"},
		},
		"root that leaves the granted folder": {
			spec: func(dir string) string {
				require.NoError(t, os.Symlink(os.TempDir(), filepath.Join(dir, "out")))
				return writeSpec(t, dir, "find-version.json", map[string]any{"root": "out"})
			},
			words: []string{`"root"`, "outside"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.spec(dir)
			before, err := os.ReadDir(dir)
			require.NoError(t, err)
			j := filepath.Join(t.TempDir(), "run.jsonl")
			ch := start(t, nil, append([]string{"run", path, "--journal", j, "--progress", "off"}, c.args...)...)
			require.Equal(t, 2, ch.wait(t, time.Minute), "stderr: %s", &ch.stderr)
			for _, w := range c.words {
				assert.Contains(t, ch.stderr.String(), w)
			}
			assert.Empty(t, ch.stdout.String())
			assert.NoFileExists(t, j, "no journal")
			after, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Equal(t, len(before), len(after), "nothing written beside the spec")
		})
	}
}

// TestRunRootIsInsideTheGrantedFolder: --root grants a folder, the spec's
// root is resolved inside it, as maker solve and MCP run_task do.
func TestRunRootIsInsideTheGrantedFolder(t *testing.T) {
	t.Parallel()
	code, s, stderr := runJSON(t, specFile(t, "find-version.json"), "--root", filepath.Dir(specFile(t, "find-version.json")))
	require.Equal(t, 0, code, stderr)
	assert.True(t, s.Solved)
	assert.Equal(t, "repo", filepath.Base(s.Root), "the spec's root inside --root")
	assert.JSONEq(t, `{"version":"1.4.2","file":"src/version.go"}`, string(s.State))
}

func TestRunMaxSteps(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "run", specFile(t, "find-version.json"), "--max-steps", "2", "--json", "--progress", "off")
	require.Equal(t, 1, c.wait(t, time.Minute), "stderr: %s", &c.stderr)
	var s specSummary
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &s))
	assert.False(t, s.Solved)
	assert.Equal(t, 2, s.Steps)
	assert.Contains(t, c.stderr.String(), "step limit")

	c = start(t, nil, "run", specFile(t, "find-version.json"), "--max-steps", "-1")
	require.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "--max-steps -1")
}

func TestRunToolDeclarationFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := filepath.Join(dir, "run.jsonl")
	code, s, stderr := runJSON(t, specFile(t, "find-version.json"), "--tool-declaration", "both", "--journal", j)
	require.Equal(t, 0, code, stderr)
	assert.True(t, s.Solved)
	head, _, _ := strings.Cut(string(mustRead(t, j)), "\n")
	assert.Contains(t, head, `"tool_declaration":"both"`)
	assert.Contains(t, head, `"read_file@`, "the declared tools are in the journal's settings")

	code, _, stderr = cli(t, "run", specFile(t, "find-version.json"), "--tool-declaration", "telepathy")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--tool-declaration")
}

// TestSolveRecordsBadSpecsAsInvalid: maker solve checks each spec task
// when it builds it: a misspelled tool, or --model sim without a script,
// is an invalid task with the reason, and the others still run.
func TestSolveRecordsBadSpecsAsInvalid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := writeSpec(t, dir, "find-version.json", map[string]any{"tools": []string{"grep", "read_files"}, "root": nil})
	noScript := filepath.Join(dir, "noscript.json")
	require.NoError(t, os.WriteFile(noScript, []byte(`{"system":"x","answer":{"type":"object"}}`), 0o644))
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(
		`{"id": "bad", "spec": "find-version.json"}`+"\n"+
			`{"id": "noscript", "spec": "noscript.json"}`+"\n"+
			`{"id": "good", "spec": `+strconv.Quote(specFile(t, "find-version.json"))+`}`+"\n"), 0o644))
	out := filepath.Join(dir, "results.jsonl")
	code, _, stderr := cli(t, "solve", tasks, "--out", out)
	assert.Equal(t, 1, code, stderr)
	rs := results(t, out)
	assert.Equal(t, "invalid", rs["bad"]["status"])
	assert.Contains(t, rs["bad"]["error"], `"read_files"`)
	assert.Equal(t, "invalid", rs["noscript"]["status"])
	assert.Contains(t, rs["noscript"]["error"], `"script" is missing`)
	assert.Equal(t, "solved", rs["good"]["status"])
	_ = bad
}

// TestBinaryVerboseShowsTheWholeReason: a reply that breaks the answer
// contract in two places is red-flagged, and --verbose shows both
// problems, on the flag's own line.
func TestBinaryVerboseShowsTheWholeReason(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "c", "object": "chat.completion", "created": 1, "model": "toy",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": `{"state": {"version": 1}, "done": "yes"}`}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
		})
	}))
	defer srv.Close()
	c := start(t, nil, "run", specFile(t, "find-version.json"), "--model", "openai:toy", "--base-url", srv.URL+"/v1",
		"--k", "1", "--max-samples", "1", "--verbose", "--progress", "off")
	require.Equal(t, 1, c.wait(t, time.Minute), "stderr: %s", &c.stderr)
	var line string
	for _, l := range strings.Split(c.stderr.String(), "\n") {
		if strings.Contains(l, "red flag") {
			line = l
		}
	}
	require.NotEmpty(t, line, c.stderr.String())
	for _, want := range []string{"missing property 'file'", "at '/done': got string, want boolean", "at '/state/version'"} {
		assert.Contains(t, line, want)
	}
}

// TestBinaryRunAdvisesPromptWhenNativeToolsAreRefused: a server that
// takes no native tools for the model (as Ollama says for a template
// without them) stops the run at once, and maker says what to do.
func TestBinaryRunAdvisesPromptWhenNativeToolsAreRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"registry.ollama.ai/library/tiny:latest does not support tools","type":"api_error"}}`))
	}))
	defer srv.Close()
	c := start(t, nil, "run", specFile(t, "find-version.json"), "--model", "openai:tiny", "--base-url", srv.URL+"/v1", "--progress", "off")
	require.Equal(t, 1, c.wait(t, time.Minute), "stderr: %s", &c.stderr)
	assert.Contains(t, c.stderr.String(), "does not support tools")
	assert.Contains(t, c.stderr.String(), "--tool-declaration prompt")
}
