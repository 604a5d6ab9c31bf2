package maker

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deployDissent proposes deploy to prod at step 2, except that sample 1
// of the step proposes staging: one dissenting valid vote among the
// first k. Other steps count.
func deployDissent(id SampleID, p string) (string, string) {
	if current(p) == 2 && !hasObservation(p) {
		if id.Index == 1 {
			return `{"tool_intent":{"tool":"deploy","args":{"target":"staging"}}}`, "stop"
		}
		return `{"tool_intent":{"tool":"deploy","args":{"target":"prod"}}}`, "stop"
	}
	return toolAtStep2(id, p)
}

func TestWriteWithOneDissentDoesNotRunUnderStop(t *testing.T) {
	var runs atomic.Int64
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}, Escalation: &Escalation{Policy: EscalateStop}},
		Model: &scripted{reply: deployDissent}, Executor: deployExecutor(t, &runs)}
	rep, err := s.Solve(context.Background(), &counter{target: 5})
	require.ErrorIs(t, err, ErrWriteDissent)
	require.ErrorIs(t, err, ErrContested)
	require.ErrorIs(t, err, ErrStep)
	assert.Contains(t, err.Error(), "step 2")
	assert.Contains(t, err.Error(), "deploy")
	assert.Zero(t, runs.Load(), "a write with a dissenting vote among the first k never runs")
	assert.Equal(t, 2, rep.Steps)
}

func TestWriteWithOneDissentIsDecidedAgainAtALargerK(t *testing.T) {
	for _, parallel := range []int{1, 4} {
		var runs atomic.Int64
		var targets []string
		var step2 *journal.StepRecord
		s := &Solver{Config: Config{Vote: vote.Config{K: 2, Parallel: parallel}},
			Model: &scripted{reply: deployDissent}, Executor: deployExecutorRecording(t, &runs, &targets),
			Progress: func(e Event) {
				if e.Step == 2 {
					c := *e.Record
					step2 = &c
				}
			}}
		rep, err := s.Solve(context.Background(), &counter{target: 5})
		require.NoError(t, err)
		assert.EqualValues(t, 1, runs.Load())
		assert.Equal(t, []string{"prod"}, targets)
		require.NotNil(t, step2)
		assert.True(t, step2.Contested && step2.Escalated, "the re-decision is recorded, never silent")
		// The first race: prod, staging, prod, prod (4 valid votes); the
		// second, at twice k, is 4 fresh votes for prod.
		assert.Equal(t, 8, step2.Valid)
		assert.Equal(t, map[string]int{step2.Key: 4}, step2.Votes)
		assert.Equal(t, 1, rep.Escalated)
	}
}

func TestWriteRuleConfigured(t *testing.T) {
	var runs atomic.Int64
	var step2 *journal.StepRecord
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}, Writes: WriteRule{K: 3}},
		Model: &scripted{reply: deployDissent}, Executor: deployExecutor(t, &runs),
		Progress: func(e Event) {
			if e.Step == 2 {
				c := *e.Record
				step2 = &c
			}
		}}
	_, err := s.Solve(context.Background(), &counter{target: 5})
	require.NoError(t, err)
	require.NotNil(t, step2)
	assert.Equal(t, 4+3, step2.Valid, "re-decided at Writes.K = 3")

	runs.Store(0)
	step2 = nil
	s.Writes = WriteRule{AnyMargin: true}
	_, err = s.Solve(context.Background(), &counter{target: 5})
	require.NoError(t, err)
	assert.EqualValues(t, 1, runs.Load())
	assert.Equal(t, 4, step2.Valid, "AnyMargin: the first race's winner runs")
	assert.False(t, step2.Escalated)

	require.ErrorIs(t, (Config{Writes: WriteRule{K: -1}}).Validate(), ErrConfig)
}

func TestUnanimousWriteRunsAtOnce(t *testing.T) {
	var runs atomic.Int64
	var step2 *journal.StepRecord
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: toolAtStep2}, Executor: deployExecutor(t, &runs),
		Progress: func(e Event) {
			if e.Step == 2 {
				c := *e.Record
				step2 = &c
			}
		}}
	_, err := s.Solve(context.Background(), &counter{target: 5})
	require.NoError(t, err)
	assert.EqualValues(t, 1, runs.Load())
	assert.Equal(t, 2, step2.Valid)
	assert.False(t, step2.Escalated)
}

func TestWriteRedecisionResumesTheSame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	var runs atomic.Int64
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}, MaxSteps: 2}, Model: &scripted{reply: deployDissent}, Executor: deployExecutor(t, &runs), Journal: j}
	_, err = s.Solve(context.Background(), &counter{target: 5})
	require.ErrorIs(t, err, ErrStepLimit)
	require.NoError(t, j.Close())
	whole := &Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: deployDissent}, Executor: deployExecutor(t, &runs)}
	want, err := whole.Solve(context.Background(), &counter{target: 5})
	require.NoError(t, err)

	j, err = journalfile.Open(path)
	require.NoError(t, err)
	s = &Solver{Config: Config{Vote: vote.Config{K: 2}}, Model: &scripted{reply: deployDissent}, Executor: deployExecutor(t, &runs), Journal: j}
	got, err := s.Solve(context.Background(), &counter{target: 5})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, want.Valid, got.Valid)
	assert.Equal(t, want.Escalated, got.Escalated)
	assert.Equal(t, want.Steps, got.Steps)
}

func TestWriteRuleIsASetting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	var runs atomic.Int64
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}, MaxSteps: 1}, Model: &scripted{reply: deployDissent}, Executor: deployExecutor(t, &runs), Journal: j}).Solve(context.Background(), &counter{target: 5})
	require.ErrorIs(t, err, ErrStepLimit)
	require.NoError(t, j.Close())
	j, err = journalfile.Open(path)
	require.NoError(t, err)
	_, err = (&Solver{Config: Config{Vote: vote.Config{K: 2}, Writes: WriteRule{AnyMargin: true}}, Model: &scripted{reply: deployDissent}, Executor: deployExecutor(t, &runs), Journal: j}).Solve(context.Background(), &counter{target: 5})
	require.ErrorIs(t, err, journal.ErrMismatch)
	assert.Contains(t, err.Error(), "write_rule")
	require.NoError(t, j.Close())
}

func TestEscalatedWriteIsNotDecidedAThirdTime(t *testing.T) {
	// Dissent at samples 1 and 3: the first race (capped at 2 samples by
	// After) is contested, the escalation's race at k 4 has a dissent
	// too, and its winner runs as decided.
	reply := func(id SampleID, p string) (string, string) {
		if current(p) == 2 && !hasObservation(p) && (id.Index == 1 || id.Index == 3) {
			return `{"tool_intent":{"tool":"deploy","args":{"target":"staging"}}}`, "stop"
		}
		return deployDissent(SampleID{Step: id.Step, Index: 0}, p)
	}
	var runs atomic.Int64
	var step2 *journal.StepRecord
	s := &Solver{Config: Config{Vote: vote.Config{K: 2}, Escalation: &Escalation{Policy: EscalateRaiseK, After: 2}},
		Model: &scripted{reply: reply}, Executor: deployExecutor(t, &runs),
		Progress: func(e Event) {
			if e.Step == 2 {
				c := *e.Record
				step2 = &c
			}
		}}
	_, err := s.Solve(context.Background(), &counter{target: 5})
	require.NoError(t, err)
	assert.EqualValues(t, 1, runs.Load())
	require.NotNil(t, step2)
	assert.Equal(t, 2+6, step2.Valid, "2 in the contested race, 6 (5 for prod, 1 against) at k 4, none after")
}
