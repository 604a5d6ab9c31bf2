package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var problemSpecs = filepath.Join("..", "..", "maker", "problems", "testdata")

// maker problem runs a problem spec's problem on the simulated model (the
// spec names the sort family), journaled and resumed; bad usage, a bad
// spec or input, and a spec the simulated model cannot play exit 2,
// writing nothing.
func TestBinaryProblemSpec(t *testing.T) {
	t.Parallel()
	spec := filepath.Join(problemSpecs, "sort-spec.json")
	j := filepath.Join(t.TempDir(), "p.jsonl")
	args := []string{"problem", "--spec", spec, "--input", `{"list": [9, 4, 7, 1, 8, 2]}`, "--seed", "5", "--json", "--journal", j}
	c := start(t, nil, args...)
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	s := c.decompSummary(t)
	assert.True(t, s.Solved)
	assert.JSONEq(t, `[1,2,4,7,8,9]`, string(s.Answer))
	require.NotNil(t, s.Correct)
	assert.True(t, *s.Correct)
	c = start(t, nil, append(args, "--resume")...)
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	again := c.decompSummary(t)
	assert.Equal(t, s.Samples, again.Samples)
	assert.Positive(t, again.Resumed, "every decision read back")

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"name": "x", "prompts": {}}`), 0o600))
	for _, a := range [][]string{
		{"problem", "--spec", spec},
		{"problem", "--input", `{"list": [1]}`},
		{"problem", "--spec", spec, "--input", `{"list": ["a"]}`},
		{"problem", "--spec", spec, "--input", `{"list": [1`},
		{"problem", "--spec", bad, "--input", `{"list": [1]}`},
		{"problem", "--spec", filepath.Join(dir, "none.json"), "--input", `{}`},
		{"problem", "--spec", filepath.Join(problemSpecs, "sum-spec.json"), "--input", `{"n": [1, 2, 3]}`}, // no family: the sim cannot play it
	} {
		c := start(t, nil, append(a, "--journal", filepath.Join(dir, "j.jsonl"))...)
		assert.Equal(t, 2, c.wait(t, 30*time.Second), "%v: %s", a, c.stderr.String())
		assert.Empty(t, c.stdout.String(), "%v", a)
		_, err := os.Stat(filepath.Join(dir, "j.jsonl"))
		assert.ErrorIs(t, err, os.ErrNotExist, "%v: no journal written", a)
	}
}
