package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBinaryVersion(t *testing.T) {
	c := start(t, nil, "--version")
	assert.Equal(t, 0, c.wait(t, 10*time.Second))
	// Built from a checkout: no module version, so "devel" (and the commit
	// when the build recorded one).
	assert.True(t, strings.HasPrefix(c.stdout.String(), "maker devel"), c.stdout.String())
	assert.Empty(t, c.stderr.String())
}

func TestBinaryCompletion(t *testing.T) {
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
