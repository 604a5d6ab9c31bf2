package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryEnumFlagsComplete: the shell completion of a flag that takes
// one of a fixed set offers exactly that set, and no file names (cobra's
// directive 4, ShellCompDirectiveNoFileComp), from the real binary as a
// shell's completion script calls it.
func TestBinaryEnumFlagsComplete(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"hanoi", "--log-format", ""}, []string{"text", "json"}},
		{[]string{"mcp", "--log-level", ""}, []string{"debug", "info", "warn", "error"}},
		{[]string{"solve", "--escalate", ""}, []string{"raise-k", "model", "stop"}},
		{[]string{"run", "--tool-declaration", "n"}, []string{"auto", "native", "prompt", "both"}},
		{[]string{"bench", "--suite", ""}, []string{"fidelity", "strategies", "guarantee", "scale", "real", "cost", "observe", "engine", "goals", "decompose", "matching"}},
		{[]string{"hanoi", "--progress", ""}, []string{"auto", "on", "off"}},
	} {
		out, err := exec.Command(binary, append([]string{"__complete"}, tc.args...)...).Output()
		require.NoError(t, err, "%v", tc.args)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.NotEmpty(t, lines)
		assert.Equal(t, ":4", lines[len(lines)-1], "%v: no file names", tc.args)
		assert.ElementsMatch(t, tc.want, lines[:len(lines)-1], "%v", tc.args)
	}
}

// TestEnumCompletionsAreAcceptedValues: what completion offers, the
// command takes; and every name in enumValues is a flag of some command,
// so the table cannot drift from the flags.
func TestEnumCompletionsAreAcceptedValues(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { seen[f.Name] = true })
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(newRoot())
	for name := range enumValues {
		assert.True(t, seen[name], "--%s is in enumValues but no command has it", name)
	}
	for _, v := range enumValues["log-level"] {
		_, err := parseLogLevel(v)
		assert.NoError(t, err, "--log-level %s", v)
	}
	for _, v := range enumValues["tool-declaration"] {
		_, err := maker.ParseToolDeclaration(v)
		assert.NoError(t, err, "--tool-declaration %s", v)
	}
	for _, flag := range []string{"log-format", "samples-per-call", "k"} {
		for _, v := range enumValues[flag] {
			code, _, stderr := cli(t, "hanoi", "--disks", "2", "--json", "--progress", "off", "--"+flag, v)
			assert.Zero(t, code, "--%s %s: %s", flag, v, stderr)
		}
	}
	for _, v := range enumValues["escalate"] {
		args := []string{"hanoi", "--disks", "2", "--json", "--progress", "off", "--escalate", v}
		if v == maker.EscalateModel {
			args = append(args, "--escalate-model", "sim")
		}
		code, _, stderr := cli(t, args...)
		assert.Zero(t, code, "--escalate %s: %s", v, stderr)
	}
}
