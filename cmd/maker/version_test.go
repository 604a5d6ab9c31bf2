package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBinaryVersion(t *testing.T) {
	t.Parallel()
	c := start(t, nil, "--version")
	assert.Equal(t, 0, c.wait(t, 10*time.Second))
	assert.Equal(t, "maker "+wantVersion(t, binary)+"\n", c.stdout.String())
	assert.Empty(t, c.stderr.String())
}

// wantVersion is what --version must print for bin, read from the build
// information the Go toolchain recorded in it (go version -m): the main
// module's version, which a standard Go install stamps from the checkout's
// VCS state (a pseudo-version such as v0.0.0-20261202174147-571b6202160f),
// or "devel" with the commit when the build recorded one but no version
// (-buildvcs=false records neither).
func wantVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command("go", "version", "-m", bin).Output()
	require.NoError(t, err)
	var mod, rev string
	modified := false
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			mod = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			rev = strings.TrimPrefix(f[1], "vcs.revision=")
		case len(f) == 2 && f[0] == "build" && f[1] == "vcs.modified=true":
			modified = true
		}
	}
	if mod != "" && mod != "(devel)" {
		return mod
	}
	v := "devel"
	if len(rev) >= 12 {
		v += " " + rev[:12]
	}
	if modified {
		v += " (modified)"
	}
	return v
}

func TestBinaryCompletion(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{
		"bash":       "__start_maker",
		"zsh":        "#compdef maker",
		"fish":       "complete -c maker",
		"powershell": "Register-ArgumentCompleter",
	} {
		c := start(t, nil, "completion", shell)
		assert.Equal(t, 0, c.wait(t, 10*time.Second), shell)
		assert.Contains(t, c.stdout.String(), want, shell)
	}
	c := start(t, nil, "completion", "tcsh")
	assert.Equal(t, 2, c.wait(t, 10*time.Second))
	assert.Contains(t, c.stderr.String(), "maker:")

	// The dynamic completions the scripts call.
	c = start(t, nil, "__complete", "hanoi", "--model", "openai:gpt-4o")
	assert.Equal(t, 0, c.wait(t, 10*time.Second))
	assert.Contains(t, c.stdout.String(), "openai:gpt-4o-mini\n")
	c = start(t, nil, "__complete", "hanoi", "--progress", "")
	assert.Equal(t, 0, c.wait(t, 10*time.Second))
	assert.True(t, strings.HasPrefix(c.stdout.String(), "auto\non\noff\n"), c.stdout.String())
}
