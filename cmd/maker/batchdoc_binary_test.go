package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryBatchDocResultsAreReal runs the tasks file docs/batch.md
// describes (testdata/batch/tasks.jsonl, plus a sixth line repeating an
// id) and checks every result line the doc shows against what maker solve
// writes, field by field; only wall_seconds may differ. A change to the results
// (a field, a token count) fails here until the doc shows it.
func TestBinaryBatchDocResultsAreReal(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "batch.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(doc), "#### The results file")
	require.True(t, ok, "docs/batch.md has no results section")
	_, block, ok := strings.Cut(after, "```json\n")
	require.True(t, ok)
	block, _, _ = strings.Cut(block, "```")

	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "spec"), os.DirFS(filepath.Join("..", "..", "testdata", "spec"))))
	tasks, err := os.ReadFile(filepath.Join("..", "..", "testdata", "batch", "tasks.jsonl"))
	require.NoError(t, err)
	tasks = append(tasks, `{"id": "hanoi-6", "hanoi": {"disks": 6}}`+"\n"...)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "batch"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "batch", "tasks.jsonl"), tasks, 0o600))
	out, state := filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "state")
	c := start(t, nil, "solve", filepath.Join(dir, "batch", "tasks.jsonl"), "--out", out, "--state", state, "--progress", "off")
	assert.Equal(t, 1, c.wait(t, 2*time.Minute), "an invalid line makes the batch exit 1; stderr: %s", c.stderr.String())

	got := map[string]map[string]any{}
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		got[fmt.Sprint(m["line"])] = m
	}
	shown := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		var want map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &want), "docs/batch.md: %s", line)
		g, ok := got[fmt.Sprint(want["line"])]
		require.True(t, ok, "docs/batch.md shows a result for line %v, which maker solve did not write", want["line"])
		delete(want, "wall_seconds")
		delete(g, "wall_seconds")
		assert.Equal(t, want, g, "docs/batch.md's result for line %v", want["line"])
		shown++
	}
	assert.NotZero(t, shown)
}
