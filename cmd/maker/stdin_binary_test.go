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

// TestBinaryDashIsStandardInput: "-" names standard input for maker run's
// spec, maker solve's tasks and --models, as for maker parse; the two on
// standard input at once are refused (exit 2).
func TestBinaryDashIsStandardInput(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	specFile, err := filepath.Abs(filepath.Join(root, "testdata", "spec", "find-version.json"))
	require.NoError(t, err)
	specText, err := os.ReadFile(specFile)
	require.NoError(t, err)
	runWith := func(stdin string, args ...string) (int, string, string) {
		cmd := exec.Command(binary, args...)
		cmd.Dir = filepath.Join(root, "testdata", "spec") // the spec's root, repo, is found from here
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return code, out.String(), errOut.String()
	}

	code, out, stderr := runWith(string(specText), "run", "-", "--progress", "off")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "solved true")

	dir := t.TempDir()
	tasks := `{"id": "h", "hanoi": {"disks": 2}}` + "\n" + `{"id": "s", "spec": ` + quote(specFile) + `}` + "\n"
	code, out, stderr = runWith(tasks, "solve", "-", "--out", filepath.Join(dir, "r.jsonl"), "--progress", "off")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "2 tasks: 2 solved")

	code, out, stderr = runWith("sim\n", "hanoi", "--disks", "2", "--models", "-", "--progress", "off")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "solved true")

	code, _, stderr = runWith(string(specText), "run", "-", "--models", "-")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "both on standard input")
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
