package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
)

// TestDecompositionHelpShowsEveryFlag: maker multiply's and maker sort's
// --help examples use every flag of the command.
func TestDecompositionHelpShowsEveryFlag(t *testing.T) {
	t.Parallel()
	for _, c := range append(familyCommands(), newProblem()) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			assert.True(t, strings.Contains(c.Example, "--"+f.Name+" ") || strings.Contains(c.Example, "--"+f.Name+"\n") || strings.HasSuffix(c.Example, "--"+f.Name),
				"maker %s --help has no example of --%s", c.Name(), f.Name)
		})
	}
}
