package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoStepSpec is a tiny spec without tools: two steps of a counter.
const twoStepSpec = `{
  "name": "count",
  "system": "Count to two, one step at a time.",
  "initial_state": {"n": 0, "doc": null},
  "answer": {
    "type": "object",
    "required": ["state", "done"],
    "properties": {
      "state": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
      "done": {"type": "boolean"}
    },
    "additionalProperties": false
  },
  "tools": [],
  "max_steps": 4,
  "script": [
    {"state": {"n": 1}, "done": false},
    {"state": {"n": 2}, "done": true}
  ]
}
`

// solveInputs is the number of inputs TestBinarySolveInputsKilledTwice
// maps its spec over: MDAP_SOLVE_INPUTS (1000 in CI's long stage), else 60
// for the default suite.
func solveInputs(t *testing.T) int {
	v := os.Getenv("MDAP_SOLVE_INPUTS")
	if v == "" {
		return 60
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "MDAP_SOLVE_INPUTS")
	require.GreaterOrEqual(t, n, 12, "MDAP_SOLVE_INPUTS: at least 12 inputs, so that both kills land mid-batch")
	return n
}

// TestBinarySolveInputsKilledTwice: maker solve INPUTS.jsonl --spec S over
// many inputs (MDAP_SOLVE_INPUTS, 60 by default), SIGKILLed twice at
// random points (each once a random share of the inputs have results) and
// run again, ends with the results of an uninterrupted run, line for line
// by id, whatever order they were written in. The kill moments come from
// a logged seed (MDAP_KILL_SEED replays them).
func TestBinarySolveInputsKilledTwice(t *testing.T) {
	t.Parallel()
	n := solveInputs(t)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("MDAP_KILL_SEED"); v != "" {
		var err error
		seed, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "MDAP_KILL_SEED")
	}
	t.Logf("%d inputs; kill moments from seed %d (replay: MDAP_KILL_SEED=%d)", n, seed, seed)
	rng := rand.New(rand.NewPCG(seed, 2))

	root := t.TempDir()
	spec := filepath.Join(root, "count.json")
	require.NoError(t, os.WriteFile(spec, []byte(twoStepSpec), 0o600))
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": "doc-%d", "input": {"doc": %d}, "seed": %d}`+"\n", i, i, i)
	}
	inputs := filepath.Join(root, "inputs.jsonl")
	require.NoError(t, os.WriteFile(inputs, []byte(b.String()), 0o600))
	args := func(dir string) []string {
		return []string{"solve", inputs, "--spec", spec, "--out", filepath.Join(dir, "results.jsonl"), "--state", filepath.Join(dir, "state"),
			"--concurrency", "8", "--p", "0.9", "--flag-rate", "0.03", "--progress", "off"}
	}
	ref := start(t, nil, args(filepath.Join(root, "ref"))...)
	require.Equal(t, 0, ref.wait(t, 5*time.Minute), "stderr: %s", &ref.stderr)
	want := results(t, filepath.Join(root, "ref", "results.jsonl"))
	require.Len(t, want, n)

	dir := filepath.Join(root, "killed")
	out := filepath.Join(dir, "results.jsonl")
	for kill := range 2 {
		// The latency keeps the batch running for a while after the
		// moment: each task takes two steps of at least 10ms, and at
		// least a third of the inputs are left.
		c := start(t, nil, append(args(dir), "--latency", "10ms")...)
		before := countLines(out)
		at := before + 1 + rng.IntN(n/3)
		// (A batch that stopped with an error is caught below.)
		require.Eventually(t, func() bool { return countLines(out) >= at || c.stderr.String() != "" }, 2*time.Minute, 2*time.Millisecond,
			"kill %d: fewer than %d results; stderr: %s", kill, at, &c.stderr)
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
		_ = c.wait(t, 30*time.Second)
		ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ok)
		require.True(t, ws.Signaled(), "kill %d at %d results: the batch must still be running (it exited %d); stderr: %s", kill, at, ws.ExitStatus(), &c.stderr)
		got := results(t, out) // whole lines, no id twice, after each kill
		t.Logf("kill %d: at %d of %d results", kill, len(got), n)
		require.Less(t, len(got), n)
	}
	c := start(t, nil, append(args(dir), "--json")...)
	require.Equal(t, 0, c.wait(t, 5*time.Minute), "stderr: %s", &c.stderr)
	var sum solveSummary
	require.NoError(t, json.Unmarshal([]byte(c.stdout.String()), &sum))
	assert.Positive(t, sum.Skipped, "inputs recorded before the kills are skipped")
	assert.Equal(t, n, sum.Solved)
	assert.Equal(t, want, results(t, out), "the same results as the uninterrupted run, by id")
}
