package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDriftFlagsUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hanoi", "--p-late", "0.8"}, "--p-late and --p-change-at go together"},
		{[]string{"hanoi", "--p-change-at", "5"}, "--p-late and --p-change-at go together"},
		{[]string{"hanoi", "--p-late", "1.5", "--p-change-at", "5"}, "--p-late 1.5: use a probability above 0, up to 1"},
		{[]string{"hanoi", "--p-late", "0.8", "--p-change-at", "0"}, "--p-change-at 0: use a step of 1 or more"},
		{[]string{"hanoi", "--model", "ollama:x", "--p-late", "0.8", "--p-change-at", "5"}, "applies to --model sim only"},
	} {
		code, out, stderr := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Empty(t, out)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}

// TestBinaryDriftKAuto: the real binary with a model that gets worse at
// step 128 of 8-disk Hanoi (p 0.995, then 0.8, errors alike): a fixed
// k = 2 (k_min at the early p) lets wrong answers win and exits 1;
// --k auto follows the drop (its change-point test fires and the
// estimate restarts from there, reading the late p) and solves it. The sim's draws are a function of (seed, step, sample), so
// the outcomes are fixed for the seed.
func TestBinaryDriftKAuto(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"hanoi", "--disks", "8", "--p", "0.995", "--wrong-answers", "1", "--p-late", "0.8", "--p-change-at", "128", "--seed", "3", "--json", "--progress", "off"}
	code, out, errOut := inDir(t, dir, append(args, "--k", "2")...)
	var fixed hanoiSummary
	require.NoError(t, json.Unmarshal([]byte(out), &fixed), errOut)
	assert.Equal(t, 1, code, "wrong steps: the run failed")
	assert.Positive(t, fixed.WrongSteps)

	code, out, errOut = inDir(t, dir, append(args, "--k", "auto")...)
	require.Equal(t, 0, code, errOut)
	var auto hanoiSummary
	require.NoError(t, json.Unmarshal([]byte(out), &auto))
	assert.True(t, auto.Solved)
	assert.Zero(t, auto.WrongSteps)
	require.NotNil(t, auto.PEstimate)
	assert.Equal(t, "correctness", auto.PEstimate.Source)
	assert.Positive(t, auto.PEstimate.Changes, "the change-point test saw the drop")
	assert.Less(t, auto.PEstimate.P, 0.9, "the estimate reads the late p")
	assert.LessOrEqual(t, auto.PEstimate.Spent, auto.PEstimate.Budget)

	code, out, _ = inDir(t, dir, append(args[:len(args)-3], "--k", "auto")...)
	require.Equal(t, 0, code)
	assert.True(t, strings.Contains(out, "from correctness") && strings.Contains(out, "failure budget"), out)
}

// TestBinaryCalibrateRefusesHardSteps: with hard steps whose errors agree
// and a spread of 0.3 (p 0.9, 16 disks), no k reaches the target anywhere
// in the region: maker calibrate prints its report with the hard-step
// floor and exits 1 naming the reason and what helps. At p 0.97 and a
// spread of 0.05, 200 steps cannot tell: it exits 1 undecided, saying
// how many more steps would. Every step of 4-disk Hanoi at p 0.99,
// 30 samples each: it gives a k and exits 0.
func TestBinaryCalibrateRefusesHardSteps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := inDir(t, dir, "calibrate", "--disks", "16", "--p", "0.9", "--wrong-answers", "1", "--difficulty-spread", "0.3", "--hard-agree", "1", "--steps-sampled", "200", "--progress", "off")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, out, "hard steps: ")
	assert.Contains(t, out, "k_min: none: no k reaches 0.95")
	assert.True(t, strings.HasPrefix(errOut, "maker: no k reaches 0.95 anywhere in the 95% confidence region"), errOut)
	assert.Contains(t, errOut, "what helps: a checker that verifies a step's answer, a stronger model")

	code, out, errOut = inDir(t, dir, "calibrate", "--disks", "16", "--p", "0.97", "--wrong-answers", "1", "--difficulty-spread", "0.05", "--hard-agree", "1", "--steps-sampled", "200", "--progress", "off")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, out, "k_min: none: undecided at target 0.95")
	assert.True(t, strings.HasPrefix(errOut, "maker: undecided at target 0.95"), errOut)
	assert.Contains(t, errOut, "more sampled steps would settle it")

	code, out, errOut = inDir(t, dir, "calibrate", "--disks", "4", "--p", "0.99", "--wrong-answers", "1", "--samples", "30", "--progress", "off")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "hard steps: 0 of 15 sampled steps")
	assert.Contains(t, out, "k_min ")
	assert.Contains(t, out, "whole-run success at least ")
}
