package batch_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Outcome says what was recorded and how to finish, by how the run ended.
func TestSummaryOutcome(t *testing.T) {
	t.Parallel()
	info := batch.SummaryText{TasksFile: "tasks.jsonl", Results: "out.jsonl", Cap: 2, CapName: "--max-cost", KeepSteps: "give --state DIR"}
	sum := batch.Summary{Tasks: 10, Solved: 6, Unfinished: 3, Failed: 1, SpentTotal: 1.5}

	err := sum.Outcome(errors.New("context canceled"), true, info)
	require.ErrorIs(t, err, batch.ErrInterrupted)
	assert.EqualError(t, err, "interrupted; 7 of 10 tasks have results in out.jsonl: run the same command again to finish: recorded tasks are skipped, unfinished ones start over (give --state DIR to keep their steps)")
	withJournals := info
	withJournals.Journals = "in state"
	assert.ErrorContains(t, sum.Outcome(nil, true, withJournals), "unfinished ones resume from their journals in state")

	spent := fmt.Errorf("step 3: %w", maker.ErrBudget)
	err = sum.Outcome(spent, false, info)
	require.ErrorIs(t, err, maker.ErrBudget)
	assert.NotErrorIs(t, err, batch.ErrInterrupted)
	assert.ErrorContains(t, err, "the batch has spent $1.5000 of its --max-cost $2.0000 over every run: run the same command with a larger --max-cost to finish (the results written so far are in out.jsonl)")

	other := errors.New("disk full")
	err = sum.Outcome(other, false, info)
	require.ErrorIs(t, err, other)
	assert.EqualError(t, err, "disk full; 7 of 10 tasks have results in out.jsonl: run the same command again to finish")

	assert.EqualError(t, batch.Summary{Tasks: 3, Solved: 1, Failed: 1, Invalid: 1}.Outcome(nil, false, info), "2 of 3 tasks not solved (1 failed, 1 invalid): see out.jsonl")
	assert.NoError(t, batch.Summary{Tasks: 3, Solved: 3}.Outcome(nil, false, info))
}
