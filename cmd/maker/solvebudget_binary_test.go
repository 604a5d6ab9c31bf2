package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinarySolveMaxCostHoldsAcrossReruns: --max-cost is the whole
// batch's, across runs. A batch stopped at its cap, run again with the
// same command, stays within the cap in total by the server's own bill
// (a proxy in front of serve-sim adds up every completion it answers);
// the summaries say what each run and all of them spent, and the message
// says to give a larger cap; a larger cap then finishes the batch.
func TestBinarySolveMaxCostHoldsAcrossReruns(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Flags = 5, withinMaxTokens
	_, base := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	dir := t.TempDir()
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, `{"id": "h%d", "hanoi": {"disks": 4}}`+"\n", i)
	}
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(b.String()), 0o600))
	bill := newBiller(t, base, 0.4, 1.6)
	solve := func(name string, want int, extra ...string) (solveSummary, string) {
		t.Helper()
		args := append([]string{"solve", tasks, "--out", filepath.Join(dir, name, "results.jsonl"), "--state", filepath.Join(dir, name, "state"),
			"--model", "openai:sim=0.4/1.6", "--base-url", bill.URL + "/v1", "--max-tokens", "60", "--k", "3",
			"--concurrency", "3", "--json", "--progress", "off"}, extra...)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, name), 0o700))
		c := start(t, nil, args...)
		require.Equal(t, want, c.wait(t, 2*time.Minute), c.stderr.String())
		var sum solveSummary
		require.NoError(t, json.Unmarshal([]byte(c.stdout.String()), &sum), c.stdout.String())
		return sum, c.stderr.String()
	}
	whole, _ := solve("whole", 0)
	wholeBill, _ := bill.bill()
	require.Positive(t, wholeBill)
	assert.InDelta(t, wholeBill, whole.Spent, 1e-9, "spent: what the server billed")
	assert.InDelta(t, wholeBill, whole.SpentTotal, 1e-9)

	capUSD := wholeBill / 2
	capArg := fmt.Sprint(capUSD)
	billed := func() float64 { d, _ := bill.bill(); return d - wholeBill }
	first, stderr := solve("capped", 1, "--max-cost", capArg)
	assert.Less(t, first.Solved, 6)
	assert.LessOrEqual(t, billed(), capUSD)
	assert.Contains(t, stderr, "run the same command with a larger --max-cost to finish")
	bill.settled(t) // the first run's cancelled calls billed in its share, not the second's
	before := billed()
	second, _ := solve("capped", 1, "--max-cost", capArg)
	bill.settled(t)
	assert.LessOrEqual(t, billed(), capUSD, "both runs together within the cap: the first billed %.6f, the second %.6f", before, billed()-before)
	assert.GreaterOrEqual(t, second.Spent, billed()-before-1e-9, "the second run's spend")
	assert.GreaterOrEqual(t, second.SpentTotal, billed()-1e-9, "both runs' spend")
	assert.LessOrEqual(t, second.SpentTotal, capUSD+1e-9)

	third, _ := solve("capped", 0, "--max-cost", fmt.Sprint(wholeBill*2))
	assert.Equal(t, 6, third.Solved)
	assert.Equal(t, second.Solved, third.Skipped, "what the capped runs finished is kept")
	assert.Positive(t, third.Resumed+third.Skipped, "the capped runs' work is kept")
	assert.GreaterOrEqual(t, third.SpentTotal, billed()-1e-9)

	// Text: the spend line.
	c := start(t, nil, "solve", tasks, "--out", filepath.Join(dir, "capped", "results.jsonl"), "--state", filepath.Join(dir, "capped", "state"),
		"--model", "openai:sim=0.4/1.6", "--base-url", bill.URL+"/v1", "--max-tokens", "60", "--k", "3", "--progress", "off", "--max-cost", fmt.Sprint(wholeBill*2))
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	assert.Contains(t, c.stdout.String(), fmt.Sprintf("spent $0.0000 in this run, $%.4f in all runs of the batch (--max-cost $%.4f)\n", third.SpentTotal, wholeBill*2))
}
