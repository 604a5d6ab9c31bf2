package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// visibleFlags returns the flags `maker NAME --help` lists, by name.
func visibleFlags(t *testing.T, name string) map[string]*pflag.Flag {
	t.Helper()
	cmd, _, err := newRoot().Find([]string{name})
	require.NoError(t, err)
	require.Equal(t, name, cmd.Name())
	flags := map[string]*pflag.Flag{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			flags[f.Name] = f
		}
	})
	return flags
}

// TestRunTakesEveryFlagOfHanoi: docs/batch.md says "`maker run` takes
// every flag of `maker hanoi` except `--disks`". Each is there, with
// hanoi's default.
func TestRunTakesEveryFlagOfHanoi(t *testing.T) {
	t.Parallel()
	require.Contains(t, string(mustRead(t, "../../docs/batch.md")), "`maker run` takes every flag of `maker hanoi` except `--disks`")
	hanoi, run := visibleFlags(t, "hanoi"), visibleFlags(t, "run")
	require.Contains(t, hanoi, "disks")
	for name, f := range hanoi {
		if name == "disks" {
			continue
		}
		r, ok := run[name]
		if assert.True(t, ok, "maker run lacks hanoi's --%s", name) {
			assert.Equal(t, f.DefValue, r.DefValue, "--%s's default", name)
		}
	}
}

// TestEveryFlagOfSolveIsDocumented: docs/batch.md's "Every flag of `maker
// solve`" names every flag `maker solve --help` lists, and the ones it
// says are "as `maker hanoi`" have hanoi's default.
func TestEveryFlagOfSolveIsDocumented(t *testing.T) {
	t.Parallel()
	doc := string(mustRead(t, "../../docs/batch.md"))
	start := strings.Index(doc, "#### Every flag of `maker solve`")
	require.GreaterOrEqual(t, start, 0, "docs/batch.md's table of solve's flags")
	section := doc[start+1:]
	section = section[:strings.Index(section, "\n#")]
	hanoi := visibleFlags(t, "hanoi")
	for name, f := range visibleFlags(t, "solve") {
		if name == "help" {
			continue
		}
		row := regexp.MustCompile("(?m)^\\|[^\\n]*`--" + regexp.QuoteMeta(name) + "[` ][^\\n]*$").FindString(section)
		if !assert.NotEmpty(t, row, "docs/batch.md's table of maker solve's flags does not name --%s", name) {
			continue
		}
		if !strings.Contains(row, "as `maker hanoi`") {
			continue
		}
		h, ok := hanoi[name]
		if assert.True(t, ok, "--%s: the doc says as maker hanoi, which has no such flag", name) {
			assert.Equal(t, h.DefValue, f.DefValue, "--%s's default: the doc says as maker hanoi", name)
		}
	}
}
