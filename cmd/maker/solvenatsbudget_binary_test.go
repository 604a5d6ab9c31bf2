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

// TestBinarySolveOverNATSMaxCostHoldsAcrossReruns: --max-cost of maker
// solve --nats is the batch's, across runs, as for a local batch
// (TestBinarySolveMaxCostHoldsAcrossReruns): stopped at its cap and run
// again with the same command, the batch stays within the cap in total
// by the server's own bill (a proxy in front of serve-sim, which the
// worker calls); the summaries say what each run and all of them spent; a
// larger cap finishes the batch. Each run's cap was its own: the second
// run spent another cap. Over --nats the cap bounds what the coordinator
// counts, the cost of the replies it gets; the bill may pass it by what
// calls withdrawn while running at a worker cost (slack, 15%). Without the
// spec's price on the Drawer's model a run over --nats counted $0 and no
// cap stopped it.
func TestBinarySolveOverNATSMaxCostHoldsAcrossReruns(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Flags = 5, withinMaxTokens
	_, base := simServer(t, simserver.Config{Oracle: hanoi.Oracle{}, Sim: cfg})
	bill := newBiller(t, base, 0.4, 1.6)
	url := startNATS(t)
	model := []string{"--model", "openai:sim=0.4/1.6"}
	w := start(t, nil, append(append([]string{"worker", "--nats", url, "--ack-wait", "1s", "--base-url", bill.URL + "/v1", "--inflight", "4"}, model...), nextIdentity(t)...)...)
	defer stopWorkers(t, w)

	dir := t.TempDir()
	// Two batches of the same tasks under other ids: two queues.
	tasks := func(name, prefix string) string {
		var b strings.Builder
		for i := range 6 {
			fmt.Fprintf(&b, `{"id": "%s%d", "hanoi": {"disks": 4}}`+"\n", prefix, i)
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o600))
		return p
	}
	whole, capped := tasks("whole.jsonl", "w"), tasks("capped.jsonl", "h")
	solve := func(tasks string, want int, extra ...string) (solveSummary, string) {
		t.Helper()
		args := append([]string{"solve", tasks, "--out", tasks + ".results", "--nats", url, "--max-tokens", "60", "--k", "3",
			"--concurrency", "3", "--json", "--progress", "off"}, append(model, extra...)...)
		c := start(t, nil, args...)
		if code := c.wait(t, 3*time.Minute); code != want {
			results, _ := os.ReadFile(tasks + ".results")
			require.Equal(t, want, code, "%s\nresults:\n%s", c.stderr.String(), results)
		}
		var sum solveSummary
		require.NoError(t, json.Unmarshal([]byte(c.stdout.String()), &sum), c.stdout.String())
		return sum, c.stderr.String()
	}
	all, _ := solve(whole, 0)
	wholeBill, _ := bill.bill()
	require.Positive(t, wholeBill)
	// The coordinator counts the replies it gets: a call still running
	// at a worker when its job is withdrawn (the step was decided) is
	// billed too (3% of the bill in one run here).
	assert.LessOrEqual(t, all.Spent, wholeBill+1e-9, "spent: at most what the server billed")
	assert.GreaterOrEqual(t, all.Spent, wholeBill*0.85, "spent: what the server billed, but withdrawn calls")
	assert.InDelta(t, all.Spent, all.SpentTotal, 1e-9)

	capUSD := wholeBill / 2
	capArg := fmt.Sprint(capUSD)
	billed := func() float64 { d, _ := bill.bill(); return d - wholeBill }
	slack := 1.15 // withdrawn calls, billed and not counted (above)
	first, stderr := solve(capped, 1, "--max-cost", capArg)
	assert.Less(t, first.Solved, 6)
	assert.LessOrEqual(t, first.SpentTotal, capUSD+1e-9)
	assert.LessOrEqual(t, billed(), capUSD*slack)
	assert.Contains(t, stderr, "run the same command with a larger --max-cost to finish")
	bill.settled(t) // the first run's withdrawn calls billed in its share, not the second's
	before := billed()
	second, _ := solve(capped, 1, "--max-cost", capArg)
	bill.settled(t)
	assert.LessOrEqual(t, second.SpentTotal, capUSD+1e-9, "both runs together within the cap")
	assert.LessOrEqual(t, billed(), capUSD*slack, "both runs together within the cap: the first billed %.6f, the second %.6f", before, billed()-before)
	assert.GreaterOrEqual(t, second.SpentTotal, first.SpentTotal, "both runs' spend")
	assert.LessOrEqual(t, second.Spent, capUSD-first.SpentTotal+1e-9, "the second run spent what the first left")

	third, _ := solve(capped, 0, "--max-cost", fmt.Sprint(wholeBill*2))
	assert.Equal(t, 6, third.Solved)
	assert.GreaterOrEqual(t, third.SpentTotal, second.SpentTotal)
	assert.LessOrEqual(t, third.SpentTotal, wholeBill*2)
}
