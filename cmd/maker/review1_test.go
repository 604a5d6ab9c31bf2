package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// review1: kmin --json used to wrap writeJSON's error in failed (exit 1);
// returned bare, an encoding error (not a write error, which run turns
// into exit 1) falls to run's default: exit 2, a usage error that names
// no flag. Either it is the command's failure (exit 1), or the input is
// bad and the message names the flag (--price) as every usage error does.
func TestKMinJSONEncodingErrorIsAFailureOrNamesTheFlag(t *testing.T) {
	code, out, errOut := cli(t, "kmin", "--json", "--price", "1e305")
	assert.NotZero(t, code, "the cost overflows: no JSON can say +Inf")
	assert.Empty(t, out)
	if code == 2 {
		assert.Contains(t, errOut, "--price", "a usage error names the flag")
	} else {
		assert.Equal(t, 1, code, errOut)
	}
}

// review1 (before cmdflags3 too): docs/calibrate.md says of --roles "the
// step-loop flags are refused with it (exit 2)"; notForRoles lists only
// calibrate's own flags, and the roles path never runs check, so the run
// flags that decide steps (notForCalibrate: --journal, --escalate, ...)
// are taken and ignored, exit 0.
func TestCalibrateRolesRefusesStepLoopFlags(t *testing.T) {
	for _, args := range [][]string{{"--journal", filepath.Join(t.TempDir(), "j.jsonl")}, {"--escalate", "raise-k"}} {
		code, _, errOut := cli(t, append([]string{"calibrate", "--roles", "multiply", "--roles-size", "2", "--roles-problems", "1", "--roles-nodes", "1", "--samples", "2"}, args...)...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, args[0], args)
	}
}
