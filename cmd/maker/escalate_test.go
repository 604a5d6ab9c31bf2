package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/batch"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEscalateFlagsUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hanoi", "--escalate", "retry"}, `--escalate "retry": use "raise-k", "model" or "stop"`},
		{[]string{"hanoi", "--escalate-after", "5"}, "--escalate-after applies to --escalate only"},
		{[]string{"hanoi", "--escalate", "stop", "--escalate-k", "5"}, "--escalate-k applies to --escalate raise-k only"},
		{[]string{"hanoi", "--escalate", "model"}, "--escalate model and --escalate-model SPEC go together"},
		{[]string{"hanoi", "--escalate", "raise-k", "--escalate-after", "-1"}, "--escalate-after -1"},
		{[]string{"hanoi", "--escalate", "raise-k", "--escalate-k", "1001"}, "--escalate-k 1001: use 0 (twice the step's k) to 1000"},
		{[]string{"calibrate", "--escalate", "stop"}, "--escalate does not apply to maker calibrate"},
		// --escalate model asks a different model, never the run's again.
		{[]string{"hanoi", "--disks", "3", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--escalate", "model", "--escalate-model", "openai:m"},
			"--escalate-model: invalid configuration: the escalation model (openai:m@http://127.0.0.1:9/v1) is the run's own model"},
	} {
		code, out, stderr := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Empty(t, out)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}

// TestBinaryEscalate: the "spread 0.2, hard steps agree" model
// on 8-disk Hanoi at k = 3: contested steps raised to k = 8 are counted
// in --json and the results line; with --escalate stop the run stops at
// the first contested step and exits 1.
func TestBinaryEscalate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"hanoi", "--disks", "8", "--p", "0.99", "--wrong-answers", "1", "--difficulty-spread", "0.2", "--hard-agree", "1", "--k", "3", "--seed", "2", "--progress", "off"}
	code, out, errOut := inDir(t, dir, append(args, "--json", "--escalate", "raise-k", "--escalate-after", "4", "--escalate-k", "8")...)
	require.Contains(t, []int{0, 1}, code, errOut)
	var s hanoiSummary
	require.NoError(t, json.Unmarshal([]byte(out), &s), errOut)
	assert.Positive(t, s.Contested)
	assert.Equal(t, s.Contested, s.Escalated)
	assert.Positive(t, s.KHistogram[3])

	_, out, _ = inDir(t, dir, append(args, "--escalate", "raise-k", "--escalate-after", "4")...)
	assert.Contains(t, out, "contested steps ")

	code, _, errOut = inDir(t, dir, append(args, "--escalate", "stop", "--escalate-after", "4")...)
	assert.Equal(t, 1, code)
	assert.True(t, strings.Contains(errOut, "contested step stopped for review"), errOut)
}

// TestBinarySolveEscalate: maker solve gives its tasks the --escalate
// policy (it used to accept the flags and race every step to its end):
// with --escalate stop, the hanoi line of TestBinaryEscalate's model stops
// at its first contested step and fails for review; with --escalate
// model, the escalation model draws the contested steps' samples.
func TestBinarySolveEscalate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 8}, "seed": 2}`+"\n"), 0o644))
	args := []string{"solve", tasks, "--p", "0.99", "--wrong-answers", "1", "--difficulty-spread", "0.2", "--hard-agree", "1", "--k", "3", "--progress", "off"}
	out := filepath.Join(dir, "stop.jsonl")
	code, _, errOut := inDir(t, dir, append(args, "--out", out, "--escalate", "stop", "--escalate-after", "4")...)
	assert.Equal(t, 1, code, errOut)
	res := readResults(t, out)["id:a"]
	assert.Equal(t, batch.StatusFailed, res.Status)
	assert.Contains(t, res.Error, "contested step stopped for review")

	// The contested step goes to the escalation model, here one that
	// nothing serves: the batch stops at that fault.
	code, _, errOut = inDir(t, dir, append(args, "--out", filepath.Join(dir, "model.jsonl"), "--escalate", "model",
		"--escalate-model", "openai:m;base=http://127.0.0.1:9/v1", "--escalate-after", "4")...)
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "openai:m at http://127.0.0.1:9/v1: nothing listens there")
}

// TestBinarySolveRefusesTheRunsOwnModelToEscalateTo: maker solve refuses
// --escalate-model naming the run's own --model as maker hanoi and maker
// run do (TestEscalateFlagsUsage): a usage error (2) before any task
// runs, naming --escalate-model, and no results written; not every task
// failed at its start (1) with the refusal in its result.
func TestBinarySolveRefusesTheRunsOwnModelToEscalateTo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 3}}`+"\n"), 0o644))
	out := filepath.Join(dir, "out.jsonl")
	code, _, errOut := inDir(t, dir, "solve", tasks, "--out", out, "--progress", "off", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
		"--escalate", "model", "--escalate-model", "openai:m")
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "--escalate-model")
	assert.Contains(t, errOut, "is the run's own model")
	_, err := os.Stat(out)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing ran: no results")
}

// TestBinarySolveEscalateModelSpecNamesItsFlag: a bad --escalate-model
// spec is refused naming --escalate-model, as maker hanoi says it
// ("--escalate-model: --model SPEC: ..."), not as if --model were bad.
func TestBinarySolveEscalateModelSpecNamesItsFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 3}}`+"\n"), 0o644))
	code, _, errOut := inDir(t, dir, "solve", tasks, "--out", filepath.Join(dir, "out.jsonl"), "--progress", "off",
		"--escalate", "model", "--escalate-model", "bogus:x")
	assert.Equal(t, 2, code, errOut)
	assert.True(t, strings.HasPrefix(errOut, "maker: --escalate-model"), errOut)
}
