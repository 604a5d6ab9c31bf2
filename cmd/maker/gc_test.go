package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryGCTarget: the maker command runs with GOGC 400 unless GOGC is
// set, which wins; the bench report records what the run had.
func TestBinaryGCTarget(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") {
			env = append(env, kv)
		}
	}
	for _, c := range []struct {
		gogc string
		want int
	}{{"", gcPercent}, {"100", 100}} {
		t.Run("GOGC="+c.gogc, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			cmd := exec.Command(binary, "bench", "--quick", "--suite", "cost", "--out", out)
			cmd.Env = env
			if c.gogc != "" {
				cmd.Env = append(cmd.Env, "GOGC="+c.gogc)
			}
			b, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", b)
			raw, err := os.ReadFile(filepath.Join(out, "report.json"))
			require.NoError(t, err)
			var rep struct {
				Machine struct {
					GCPercent int `json:"gc_percent"`
				} `json:"machine"`
			}
			require.NoError(t, json.Unmarshal(raw, &rep))
			assert.Equal(t, c.want, rep.Machine.GCPercent, "GOGC=%q", c.gogc)
		})
	}
}
