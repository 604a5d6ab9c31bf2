package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// journalSettings reads the settings a journal's header records.
func journalSettings(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(raw), "\n")
	var head struct {
		Settings map[string]any `json:"settings"`
	}
	require.NoError(t, json.Unmarshal([]byte(first), &head))
	return head.Settings
}

// TestBinaryGuardFlags: --write-k (for every category and per category),
// --flag-alarm and its level and history, --self-correction and
// --tool-first reach
// the run's settings (the journal records them, so a resume with other
// guards is refused); bad values exit 2 naming the flag, before anything
// is written.
func TestBinaryGuardFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := []string{"hanoi", "--disks", "2", "--progress", "off"}

	j := filepath.Join(dir, "guarded.jsonl")
	code, stderr := runBinary(t, nil, append(base, "--journal", j, "--write-k", "5", "--write-k", "bash=7", "--write-k", "git=3",
		"--self-correction", "--flag-alarm-level", "1e-6", "--flag-alarm-history", "50", "--tool-first")...)
	require.Zero(t, code, stderr)
	st := journalSettings(t, j)
	assert.Equal(t, true, st["flags"].(map[string]any)["self_correction"])
	extra := st["extra"].(map[string]any)
	assert.Equal(t, "unanimous-or-k5 bash=k7 git=k3", extra["write_rule"])
	assert.Equal(t, "level=1e-06 history=50", extra["flag_alarm"])
	assert.Equal(t, "on", extra["tool_first"])

	code, stderr = runBinary(t, nil, append(base, "--journal", j, "--resume", "--write-k", "5")...)
	assert.Equal(t, 2, code, "a resume under other guards is another run: %s", stderr)

	j = filepath.Join(dir, "off.jsonl")
	code, stderr = runBinary(t, nil, append(base, "--journal", j, "--flag-alarm", "off", "--write-any-margin")...)
	require.Zero(t, code, stderr)
	extra = journalSettings(t, j)["extra"].(map[string]any)
	assert.Equal(t, "off", extra["flag_alarm"])
	assert.Equal(t, "any-margin", extra["write_rule"])

	j = filepath.Join(dir, "default.jsonl")
	code, stderr = runBinary(t, nil, append(base, "--journal", j)...)
	require.Zero(t, code, stderr)
	st = journalSettings(t, j)
	assert.Nil(t, st["extra"], "no guard flag: the settings of a run before these flags")
	assert.NotEqual(t, true, st["flags"].(map[string]any)["self_correction"], "off by default")

	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--write-k", "file_read=3"}, "--write-k"},
		{[]string{"--write-k", "shell=3"}, "not a category with side effects"},
		{[]string{"--write-k", "0"}, "from 1 to"},
		{[]string{"--write-k", "3", "--write-k", "4"}, "given twice"},
		{[]string{"--write-k", "3", "--write-any-margin"}, "--write-any-margin"},
		{[]string{"--flag-alarm", "maybe"}, "use on or off"},
		{[]string{"--flag-alarm-level", "1.5"}, "--flag-alarm-level"},
		{[]string{"--flag-alarm-history", "0"}, "--flag-alarm-history"},
		{[]string{"--flag-alarm", "off", "--flag-alarm-level", "1e-3"}, "apply to --flag-alarm on only"},
	} {
		j := filepath.Join(dir, "bad.jsonl")
		code, stderr := runBinary(t, nil, append(append(base, "--journal", j), c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.says, "%v", c.args)
		assert.NoFileExists(t, j, "%v: nothing written", c.args)
	}
	code, stderr = runBinary(t, nil, "solve", "--write-k", "3", "/dev/null")
	assert.Equal(t, 2, code, "maker solve takes no guard flag (its jobs set their settings): %s", stderr)
}
