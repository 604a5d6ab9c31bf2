package batch_test

import (
	"bytes"
	"testing"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/stretchr/testify/assert"
)

// The text says the tasks by status and the totals always, and what was
// spent, replayed and rate-limited only when there is something to say.
func TestSummaryWriteText(t *testing.T) {
	t.Parallel()
	info := batch.SummaryText{TasksFile: "tasks.jsonl", Results: "out.jsonl", Journals: "in state", CapName: "--max-cost"}
	var buf bytes.Buffer
	batch.Summary{Tasks: 3, Solved: 2, Failed: 1, Steps: 14, Samples: 50, Cost: 0.5, WallSeconds: 1.2}.WriteText(&buf, info)
	assert.Equal(t, "solve tasks.jsonl: 3 tasks: 2 solved, 1 failed, 0 invalid; results in out.jsonl\n"+
		"steps 14, samples 50, flagged 0, errors 0; tokens in 0, out 0; cost 0.5000; wall 1.2s\n", buf.String())

	buf.Reset()
	info.Cap = 2
	batch.Summary{Tasks: 1, Unfinished: 1, Skipped: 1, Spent: 0.25, SpentTotal: 1.5, Resumed: 7,
		Limits: &batch.LimitStats{RateLimited: 3, Retried: 2, Paused: 1, PeakInFlight: 4}}.WriteText(&buf, info)
	out := buf.String()
	assert.Contains(t, out, "1 task: 0 solved, 0 failed, 0 invalid, 1 unfinished (1 recorded by an earlier run); results in out.jsonl\n")
	assert.Contains(t, out, "spent $0.2500 in this run, $1.5000 in all runs of the batch (--max-cost $2.0000)\n")
	assert.Contains(t, out, "7 steps replayed from the journals in state\n")
	assert.Contains(t, out, "provider limits: 3 rate-limit answers, 2 calls retried, 1 calls paused, at most 4 in flight\n")

	buf.Reset()
	info.Cap = 0
	batch.Summary{Tasks: 1, SpentTotal: 1}.WriteText(&buf, info)
	assert.Contains(t, buf.String(), "spent $0.0000 in this run, $1.0000 in all runs of the batch\n", "no cap: none shown")
}
