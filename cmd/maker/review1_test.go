package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

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
