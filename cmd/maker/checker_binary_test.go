package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkerSpec counts 0 to 2 with one grep on the way; its checker says
// n goes up by one.
const checkerSpec = `{
  "name": "count", "system": "Add one to n; done at 2.",
  "initial_state": {"n": 0},
  "answer": {"type": "object", "required": ["state", "done"]},
  "tools": ["grep"],
  "checker": {"anyOf": [
    {"properties": {"before": {"properties": {"n": {"const": 0}}}, "answer": {"properties": {"state": {"properties": {"n": {"const": 1}}}}}}},
    {"properties": {"before": {"properties": {"n": {"const": 1}}}, "answer": {"properties": {"state": {"properties": {"n": {"const": 2}}}}}}}
  ]},
  "script": [{"state": {"n": 1}, "done": false}, {"tool_intent": {"tool": "grep", "args": {"pattern": "x"}}}, {"state": {"n": 2}, "done": true}]
}`

// TestBinaryRunCountsCheckedSteps: maker run of a spec with a checker
// reports the steps it checked and the vote-only one (the tool call), in
// --json and in the text summary; a checker that refuses the script's
// own answer is bad input, exit 2.
func TestBinaryRunCountsCheckedSteps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "count.json")
	require.NoError(t, os.WriteFile(path, []byte(checkerSpec), 0o600))
	c := start(t, nil, "run", path, "--json", "--progress", "off", "--p", "1")
	require.Equal(t, 0, c.wait(t, time.Minute), "stderr: %s", &c.stderr)
	var sum struct {
		Solved   bool `json:"solved"`
		Steps    int  `json:"steps"`
		Checked  int  `json:"checked"`
		VoteOnly int  `json:"vote_only"`
	}
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &sum), c.stdout.String())
	assert.True(t, sum.Solved)
	assert.Equal(t, 3, sum.Steps)
	assert.Equal(t, 2, sum.Checked)
	assert.Equal(t, 1, sum.VoteOnly)

	c = start(t, nil, "run", path, "--progress", "off", "--p", "1")
	require.Equal(t, 0, c.wait(t, time.Minute), "stderr: %s", &c.stderr)
	assert.Contains(t, c.stdout.String(), "checked steps 2, vote-only 1")

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"name": "b", "system": "s", "answer": {"type": "object"},
		"checker": {"properties": {"answer": {"required": ["never"]}}}, "script": [{"done": true}]}`), 0o600))
	c = start(t, nil, "run", bad, "--progress", "off")
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "its checker refuses the script's answer")
}
