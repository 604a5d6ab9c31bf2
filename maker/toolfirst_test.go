package maker

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// splitDeploy, at step 2: deploy(a), deploy(b), then three plain answers,
// then deploy(a) on: the tool is the majority from the start, its
// arguments split at first. Other steps count.
func splitDeploy(id SampleID, p string) (string, string) {
	if current(p) == 2 && !hasObservation(p) {
		switch {
		case id.Index == 1:
			return `{"tool_intent":{"tool":"deploy","args":{"target":"b"}}}`, "stop"
		case id.Index >= 2 && id.Index <= 4:
			return fmt.Sprintf(`{"next": %d}`, current(p)+1), "stop"
		}
		return `{"tool_intent":{"tool":"deploy","args":{"target":"a"}}}`, "stop"
	}
	return fmt.Sprintf(`{"next": %d}`, current(p)+1), "stop"
}

// TestToolFirstVotesTheToolThenItsArguments: with ToolFirst the tool
// most samples chose wins first and its arguments are voted among its
// samples; voting whole calls, the split arguments lose to a plain answer
// that repeats. The same at Parallel 1 and 4; the setting is in the
// journal.
func TestToolFirstVotesTheToolThenItsArguments(t *testing.T) {
	solve := func(cfg Config) ([]string, *journal.StepRecord) {
		var runs atomic.Int64
		var targets []string
		var step2 *journal.StepRecord
		s := &Solver{Config: cfg, Model: &scripted{reply: splitDeploy}, Executor: deployExecutorRecording(t, &runs, &targets),
			Progress: func(e Event) {
				if e.Step == 2 {
					c := *e.Record
					step2 = &c
				}
			}}
		_, err := s.Solve(context.Background(), &counter{target: 5})
		require.NoError(t, err)
		return targets, step2
	}
	anyMargin := WriteRule{AnyMargin: true} // the write rule apart: here the vote itself
	whole, _ := solve(Config{Vote: vote.Config{K: 2}, Writes: anyMargin})
	assert.Empty(t, whole, "voting whole calls: deploy(a) 1, deploy(b) 1, the plain answer leads by 2")
	var first *journal.StepRecord
	for _, par := range []int{1, 2} {
		targets, step2 := solve(Config{Vote: vote.Config{K: 2, Parallel: par}, Writes: anyMargin, ToolFirst: true})
		assert.Equal(t, []string{"a"}, targets, "parallel %d: deploy wins 2-0, then a leads b by 2", par)
		require.NotNil(t, step2)
		assert.Equal(t, 3, step2.Flagged, "the plain answers are no votes on deploy's arguments")
		// Its samples say so too: the plain answers red-flagged as
		// another group, the others votes on deploy's arguments.
		votes, other := map[string]int{}, 0
		for _, x := range step2.Samples {
			switch {
			case x.Flag == vote.ErrOtherGroup.Error():
				other++
			case x.Voted():
				votes[cmp.Or(x.Class, step2.Key)]++
			}
		}
		assert.Equal(t, 3, other, "parallel %d", par)
		assert.Equal(t, step2.Votes, votes, "parallel %d: the samples' classes are the votes", par)
		if first == nil {
			first = step2
		} else {
			assert.Equal(t, first.Votes, step2.Votes, "parallel %d", par)
			assert.Equal(t, first.Key, step2.Key, "parallel %d", par)
		}
	}

	// Under the write rule a tool-first win with another tool's (or
	// answer's) samples beside it is not unanimous.
	var runs atomic.Int64
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}, ToolFirst: true, Escalation: &Escalation{Policy: EscalateStop}},
		Model: &scripted{reply: splitDeploy}, Executor: deployExecutor(t, &runs)}
	_, err := s.Solve(context.Background(), &counter{target: 5})
	require.ErrorIs(t, err, ErrWriteDissent)
	assert.Zero(t, runs.Load())

	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}, MaxSteps: 1, ToolFirst: true}, Model: &scripted{reply: splitDeploy}, Journal: j}).Solve(context.Background(), &counter{target: 5})
	require.ErrorIs(t, err, ErrStepLimit)
	require.NoError(t, j.Close())
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: splitDeploy}, Journal: j}).Solve(context.Background(), &counter{target: 5})
	require.ErrorIs(t, err, journal.ErrMismatch)
	assert.Contains(t, err.Error(), "tool_first")
	require.NoError(t, j.Close())
}
