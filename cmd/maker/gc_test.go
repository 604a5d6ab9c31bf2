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

// TestBinaryGCTarget: the bench report records the GC the run had: with
// neither GOGC nor GOMEMLIMIT set, the command's heap floor with GOGC 100
// above it (internal/gcpolicy); with GOGC set, that GOGC and no policy.
func TestBinaryGCTarget(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			env = append(env, kv)
		}
	}
	for _, c := range []struct {
		gogc   string
		want   int
		policy bool
	}{{"", 100, true}, {"400", 400, false}} {
		t.Run("GOGC="+c.gogc, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			cmd := exec.Command(binary, "bench", "--quick", "--suite", "matching", "--out", out) // the quickest suite: the GC line is the report's, whatever the suite
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
					GCPercent int    `json:"gc_percent"`
					GCPolicy  string `json:"gc_policy"`
				} `json:"machine"`
			}
			require.NoError(t, json.Unmarshal(raw, &rep))
			assert.Equal(t, c.want, rep.Machine.GCPercent, "GOGC=%q", c.gogc)
			assert.Equal(t, c.policy, rep.Machine.GCPolicy != "", "GOGC=%q: policy %q", c.gogc, rep.Machine.GCPolicy)
			md, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
			require.NoError(t, err)
			if c.policy {
				assert.Contains(t, string(md), "; GC: heap floor 32 MiB, GOGC 100 above it")
			} else {
				assert.Contains(t, string(md), "; GOGC 400\n")
			}
		})
	}
}
