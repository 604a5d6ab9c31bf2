package runsummary_test

import (
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/runsummary"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
)

// TestText: each line of a run's text appears when, and only when, the
// report has something to say on it.
func TestText(t *testing.T) {
	bare := maker.Report{Steps: 2, Wall: 1500 * time.Microsecond, Counts: vote.Counts{Launched: 6, Valid: 6}}
	assert.Equal(t, "steps 2 (resumed 0), done false, wall 2ms\n"+
		"samples 6: valid 6, flagged 0, errors 0, cancelled 0; 3.000 per step\n"+
		"tokens in 0, out 0; cost $0.0000\n", runsummary.Text(bare))

	full := bare
	full.Resumed, full.StepTime, full.Done = 1, 3*time.Second, true
	full.Flags = map[string]int{"overlong": 2, "cut off": 1}
	full.Usage = vote.Usage{InputTokens: 10, OutputTokens: 4, CachedInputTokens: 3, CacheWriteTokens: 2, Requests: 5}
	full.Models = []maker.ModelReport{{Model: "a", ModelStep: journal.ModelStep{WinnerVotes: 4}}, {Model: "b", ModelStep: journal.ModelStep{WinnerVotes: 1}}}
	full.ToolCalls, full.Denied = 3, 1
	full.Checked, full.VoteOnly = 1, 1
	full.Contested, full.Escalated = 1, 1
	full.KHistogram = map[int]int{3: 1, 5: 1}
	text := runsummary.Text(full)
	for _, want := range []string{
		"steps 2 (resumed 1), done true, wall 2ms (all processes: 3s of steps)\n",
		"flags: cut off 1, overlong 2\n",
		"tokens in 10, out 4 (cached in 3, cache writes 2, requests 5); cost $0.0000\n",
		"  a: samples 0, valid 0, flagged 0, errors 0, winner votes 4,",
		"  b: samples 0, valid 0, flagged 0, errors 0, winner votes 1,",
		"tool calls 3, denied 1\n",
		"checked steps 1, vote-only 1\n",
		"contested steps 1, escalated 1\n",
		"steps by k: k=3 1, k=5 1\n",
	} {
		assert.Contains(t, text, want)
	}
}
