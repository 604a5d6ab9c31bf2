package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runBinary runs the maker binary with args and extra environment, and
// returns its exit status and stderr.
func runBinary(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestBinaryEditedJournalRefused: a journal with one winner changed is
// refused on --resume with exit 2, naming its first bad line, and left as
// it was; with MDAP_JOURNAL_KEY the chain is an HMAC, and resuming
// without the key, or with a key too short, exits 2 too.
func TestBinaryEditedJournalRefused(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "run.jsonl")
	args := []string{"hanoi", "--disks", "4", "--seed", "3", "--progress", "off", "--journal", j}
	code, stderr := runBinary(t, nil, args...)
	require.Equal(t, 0, code, stderr)
	lines := strings.SplitAfter(string(mustRead(t, j)), "\n")
	require.Contains(t, lines[3], `"winner":{"value":`)
	i := strings.Index(lines[3], `"winner":{"value":`) + len(`"winner":{"value":`)
	k := strings.IndexAny(lines[3][i:], "0123456789") + i
	lines[3] = lines[3][:k] + string('0'+(lines[3][k]-'0'+1)%10) + lines[3][k+1:]
	edited := strings.Join(lines, "")
	require.NoError(t, os.WriteFile(j, []byte(edited), 0o644))
	code, stderr = runBinary(t, nil, append(args, "--resume")...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, j+":4 does not match the journal's hash chain")
	assert.Equal(t, edited, string(mustRead(t, j)), "left as it was")

	keyed := filepath.Join(dir, "keyed.jsonl")
	kargs := []string{"hanoi", "--disks", "3", "--progress", "off", "--journal", keyed}
	key := "MDAP_JOURNAL_KEY=0123456789abcdef0123456789abcdef"
	code, stderr = runBinary(t, []string{key}, kargs...)
	require.Equal(t, 0, code, stderr)
	code, stderr = runBinary(t, []string{key}, append(kargs, "--resume")...)
	assert.Equal(t, 0, code, stderr)
	code, stderr = runBinary(t, []string{"MDAP_JOURNAL_KEY="}, append(kargs, "--resume")...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "set MDAP_JOURNAL_KEY")
	code, stderr = runBinary(t, []string{"MDAP_JOURNAL_KEY=short"}, "hanoi", "--disks", "3", "--progress", "off", "--journal", filepath.Join(dir, "new.jsonl"))
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "at least 16")
	assert.NoFileExists(t, filepath.Join(dir, "new.jsonl"), "nothing written")
}
