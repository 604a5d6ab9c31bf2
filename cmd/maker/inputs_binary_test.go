package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinarySolveOneSpecOverManyInputs: maker solve INPUTS --spec S runs
// the spec once for each line of {"id", "input"}, each task starting from
// the spec's initial state with its input merged in; a rerun skips them
// all.
func TestBinarySolveOneSpecOverManyInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec, err := filepath.Abs(filepath.Join("..", "..", "testdata", "spec", "find-version.json"))
	require.NoError(t, err)
	inputs := filepath.Join(dir, "inputs.jsonl")
	var lines []byte
	for _, id := range []string{"a", "b", "c"} {
		lines = append(lines, `{"id": "`+id+`", "input": {"note": "`+id+`"}}`+"\n"...)
	}
	require.NoError(t, os.WriteFile(inputs, lines, 0o600))
	out, state := filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "state")
	args := []string{"solve", inputs, "--spec", spec, "--out", out, "--state", state, "--progress", "off"}
	c := start(t, nil, args...)
	require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	ids := map[string]string{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var r struct{ ID, Status string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		ids[r.ID] = r.Status
	}
	assert.Equal(t, map[string]string{"a": "solved", "b": "solved", "c": "solved"}, ids)
	journals, err := filepath.Glob(filepath.Join(state, "*.jsonl"))
	require.NoError(t, err)
	assert.Len(t, journals, 3, "a journal per input")

	c = start(t, nil, append(args, "--json")...)
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	var sum struct{ Skipped int }
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &sum))
	assert.Equal(t, 3, sum.Skipped, "a rerun skips what is recorded")
}
