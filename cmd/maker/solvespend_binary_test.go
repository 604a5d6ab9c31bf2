package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinarySolveSpendChart: --spend-chart FILE writes an SVG chart of
// the batch's spend over the run when it ends, stopped at the cap too: it
// names the tasks file and the cap, and its dollar ticks reach what the
// summary says was spent in all. A folder that does not exist is refused
// at once (exit 2), nothing run.
func TestBinarySolveSpendChart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 4 {
		fmt.Fprintf(&b, `{"id": "h%d", "hanoi": {"disks": 5}, "seed": %d}`+"\n", i, i)
	}
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(b.String()), 0o600))
	chart := filepath.Join(dir, "spend.svg")
	c := start(t, nil, "solve", tasks, "--out", filepath.Join(dir, "results.jsonl"), "--state", filepath.Join(dir, "state"),
		"--price-in", "0.4", "--price-out", "1.6", "--max-cost", "0.03", "--latency", "2ms", "--progress", "off", "--json", "--spend-chart", chart)
	require.Equal(t, 1, c.wait(t, 2*time.Minute), "stopped at the cap: %s", c.stderr.String())
	var sum solveSummary
	require.NoError(t, json.Unmarshal([]byte(c.stdout.String()), &sum))
	require.Positive(t, sum.SpentTotal)
	svg := string(mustRead(t, chart))
	fi, err := os.Stat(chart)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the chart shows what was spent: 0600, as the results")
	assert.True(t, strings.HasPrefix(svg, "<?xml"), "an SVG file")
	assert.Contains(t, svg, "maker solve "+tasks+": the batch")
	assert.Contains(t, svg, "--max-cost $0.03")
	top := 0.0
	for _, m := range regexp.MustCompile(`>\$([0-9.]+)<`).FindAllStringSubmatch(svg, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		top = max(top, v)
	}
	assert.GreaterOrEqual(t, top, sum.SpentTotal*0.5, "the dollar axis spans what was spent")

	code, _, stderr := cli(t, "solve", tasks, "--out", filepath.Join(dir, "other.jsonl"), "--spend-chart", filepath.Join(dir, "missing", "spend.svg"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--spend-chart")
	assert.NoFileExists(t, filepath.Join(dir, "other.jsonl"), "nothing written")
}
