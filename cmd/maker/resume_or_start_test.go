package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryResumeOrStart: one command line for a supervisor. On a
// journal that does not exist it starts (exit 0); again, it resumes,
// replaying every step; with other settings it is refused (exit 2) and the
// journal is untouched.
func TestBinaryResumeOrStart(t *testing.T) {
	t.Parallel()
	j := filepath.Join(t.TempDir(), "j.jsonl")
	args := []string{"hanoi", "--disks", "4", "--progress", "off", "--json", "--journal", j, "--resume-or-start"}
	first := startRace(t, nil, args...)
	require.Equal(t, 0, first.wait(t, time.Minute), first.stderr.String())
	lines := countLines(j)
	require.Positive(t, lines)

	again := startRace(t, nil, args...)
	require.Equal(t, 0, again.wait(t, time.Minute), again.stderr.String())
	assert.Equal(t, lines, countLines(j), "a finished run resumed adds no step")

	other := startRace(t, nil, "hanoi", "--disks", "5", "--progress", "off", "--json", "--journal", j, "--resume-or-start")
	assert.Equal(t, 2, other.wait(t, time.Minute), "another task's journal is refused")
	assert.Contains(t, other.stderr.String(), "--journal")
	assert.Equal(t, lines, countLines(j), "the refused run wrote nothing")

	both := startRace(t, nil, append(args, "--resume")...)
	assert.Equal(t, 2, both.wait(t, time.Minute))
	assert.Contains(t, both.stderr.String(), "--resume-or-start")
}
