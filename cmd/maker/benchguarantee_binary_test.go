package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/benchmarks"
	"github.com/mdap-go/mdap/internal/evidence"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryBenchGuaranteeQuick runs `maker bench --suite guarantee
// --quick` as CI does: it exits 0 and writes the guarantee table, each
// cell's two rows with the bound of their counts beside the target. Then
// --merge reruns another suite into the same report and keeps the
// guarantee section, naming the run that measured it.
func TestBinaryBenchGuaranteeQuick(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "bench")
	c := start(t, nil, "bench", "--quick", "--suite", "guarantee", "--out", out)
	require.Equal(t, 0, c.wait(t, 5*time.Minute), "stderr: %s", c.stderr.String())
	md := string(mustRead(t, filepath.Join(out, "REPORT.md")))
	assert.Contains(t, md, "## Guarantee: is the whole run right with probability T?")
	assert.Contains(t, md, "| cell | setup | disks | policy | runs | failures | 95% upper bound | target 1 − T | verdict |")
	var rep benchmarks.Report
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(out, "report.json")), &rep))
	require.NotNil(t, rep.Guarantee)
	g := rep.Guarantee
	assert.Equal(t, 0.05, g.Limit)
	assert.Len(t, g.Rows, 18, "nine cells, two policies each")
	cells := map[string]bool{}
	for _, r := range g.Rows {
		cells[r.Cell] = true
		assert.InDelta(t, evidence.Upper(r.Failures, r.Runs, 0.95), r.Upper, 1e-12)
		assert.Contains(t, md, "| "+r.Policy+" | ", "the table has the row")
	}
	for _, name := range []string{"steady p", "spread 0.05", "spread 0.2", "drift early", "drift late", "agreeing hard steps", "1 rival", "3 rivals", "8 rivals"} {
		assert.True(t, cells[name], "cell %s", name)
		assert.Contains(t, md, "| "+name+" | `--p ", "cell %s in the table", name)
	}

	c = start(t, nil, "bench", "--quick", "--suite", "observe", "--merge", "--out", out)
	require.Equal(t, 0, c.wait(t, 5*time.Minute), "stderr: %s", c.stderr.String())
	assert.Contains(t, c.stdout.String(), "bench: observe in ", "the summary names the suite run, not the kept one")
	merged := string(mustRead(t, filepath.Join(out, "REPORT.md")))
	assert.Contains(t, merged, "## Guarantee: is the whole run right with probability T?")
	assert.Contains(t, merged, "- kept from an earlier report (`--merge`): guarantee ")
	assert.Contains(t, merged, "measured by `maker bench --quick --suite guarantee --out "+out+"`")
	assert.Contains(t, merged, "- command: `maker bench --quick --suite observe --merge --out "+out+"`")
	var again benchmarks.Report
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(out, "report.json")), &again))
	assert.Equal(t, g.Rows, again.Guarantee.Rows, "the kept suite's figures unchanged")
	assert.NotNil(t, again.Observe)
}

// TestBinaryBenchMergeUsage: --merge without a report to merge into, or
// with one that is not a report, is a usage error (exit 2) before any
// suite runs, and nothing is written.
func TestBinaryBenchMergeUsage(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	c := start(t, nil, "bench", "--quick", "--suite", "guarantee", "--merge", "--out", empty)
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "--merge: ")
	assert.Contains(t, c.stderr.String(), "report.json")
	assert.NoFileExists(t, filepath.Join(empty, "REPORT.md"))

	bad := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bad, "report.json"), []byte("not json"), 0o644))
	c = start(t, nil, "bench", "--quick", "--suite", "guarantee", "--merge", "--out", bad)
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.True(t, strings.Contains(c.stderr.String(), "is not a maker bench report"), c.stderr.String())
	assert.NoFileExists(t, filepath.Join(bad, "REPORT.md"))
	assert.Equal(t, "not json", string(mustRead(t, filepath.Join(bad, "report.json"))))
}
