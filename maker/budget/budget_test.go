package budget_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/budget"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gpt41mini is gpt-4.1-mini's list price with its cached-input discount.
var gpt41mini = maker.Price{InputPerMillion: 0.40, OutputPerMillion: 1.60, CachedInputPerMillion: 0.10}

func budgetRun(t *testing.T, journalPath string, resume bool, b *budget.Budget, perCall int) (maker.Report, error) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.FlagRate = 5, 0.85, 0
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	task, err := hanoi.New(5)
	require.NoError(t, err)
	var j *journal.Journal
	if resume {
		j, err = journalfile.Open(journalPath)
	} else {
		j, err = journalfile.Create(journalPath)
	}
	require.NoError(t, err)
	defer func() { require.NoError(t, j.Close()) }()
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3, Parallel: 3}, Price: gpt41mini, SamplesPerCall: perCall, MaxTokens: 200}, Model: m, Budget: b, Journal: j}
	return s.Solve(context.Background(), task)
}

// TestBudgetNeverPassedAndResumes: a cap stops the run before it is
// passed, as a step failing with a *budget.Error naming the cap and what
// was spent; spent (and the report's cost) stay within the cap at every
// cap tried; a resume with no cap finishes with the uninterrupted run's
// steps, counts and tokens.
func TestBudgetNeverPassedAndResumes(t *testing.T) {
	for _, perCall := range []int{1, maker.SamplesPerCallAuto} {
		dir := t.TempDir()
		whole, err := budgetRun(t, filepath.Join(dir, "whole.jsonl"), false, budget.New(0), perCall)
		require.NoError(t, err)
		require.True(t, whole.Done)
		for _, frac := range []float64{0.1, 0.37, 0.8} {
			capUSD := whole.Cost * frac
			path := filepath.Join(dir, fmt.Sprintf("capped-%v.jsonl", frac))
			b := budget.New(capUSD)
			rep, err := budgetRun(t, path, false, b, perCall)
			require.Error(t, err)
			assert.ErrorIs(t, err, maker.ErrBudget)
			// docs/cost.md:150-151: it wraps ErrPermanent, so the step
			// stops at the refusal instead of spending its error budget.
			assert.ErrorIs(t, err, maker.ErrPermanent)
			assert.NotErrorIs(t, err, vote.ErrTooManyErrors)
			var be *budget.Error
			require.True(t, errors.As(err, &be))
			assert.Equal(t, capUSD, be.Cap)
			assert.LessOrEqual(t, b.Spent(), capUSD, "cap %v: spent %v", capUSD, b.Spent())
			assert.LessOrEqual(t, rep.Cost, capUSD)
			assert.False(t, rep.Done)
			assert.Less(t, rep.Steps, whole.Steps)

			resumed, err := budgetRun(t, path, true, budget.New(whole.Cost*2), perCall)
			require.NoError(t, err)
			assert.True(t, resumed.Done)
			assert.Equal(t, whole.Steps, resumed.Steps)
			assert.Equal(t, whole.Valid, resumed.Valid)
			assert.Equal(t, whole.Flagged, resumed.Flagged)
			assert.Equal(t, whole.Usage.InputTokens, resumed.Usage.InputTokens)
			assert.Equal(t, whole.Usage.OutputTokens, resumed.Usage.OutputTokens)
			assert.InDelta(t, whole.Cost, resumed.Cost, 1e-12)
		}
	}
}

// TestBudgetCreditedOnResume: a resume credits its budget with the
// journaled steps' cost, so the same cap stops it again within the cap.
func TestBudgetCreditedOnResume(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j.jsonl")
	whole, err := budgetRun(t, filepath.Join(dir, "whole.jsonl"), false, nil, 1)
	require.NoError(t, err)
	b := budget.New(whole.Cost / 2)
	_, err = budgetRun(t, path, false, b, 1)
	require.ErrorIs(t, err, maker.ErrBudget)
	spent := b.Spent()
	again := budget.New(whole.Cost / 2)
	rep, err := budgetRun(t, path, true, again, 1)
	require.ErrorIs(t, err, maker.ErrBudget)
	assert.Positive(t, rep.Steps)
	assert.LessOrEqual(t, again.Spent(), whole.Cost/2)
	assert.GreaterOrEqual(t, again.Spent(), rep.Cost-1e-12, "the journaled steps' cost is credited")
	assert.LessOrEqual(t, rep.Cost, spent+1e-12)
}

// TestNilBudgetCapsNothing: a nil *Budget (a command's cap left unset,
// handed to Solver.Budget, a maker.Spender, as it is) caps and counts
// nothing, and a run with it solves, resumes included (Credit), as one
// without a budget.
func TestNilBudgetCapsNothing(t *testing.T) {
	var b *budget.Budget
	require.NoError(t, b.Reserve(1e9))
	b.Settle(1e9, 5)
	b.Credit(3)
	b.CreditAhead(2)
	assert.Zero(t, b.Spent())
	assert.Zero(t, b.Settled())
	path := filepath.Join(t.TempDir(), "nil.jsonl")
	rep, err := budgetRun(t, path, false, nil, 1)
	require.NoError(t, err)
	assert.True(t, rep.Done)
	rep, err = budgetRun(t, path, true, nil, 1)
	require.NoError(t, err)
	assert.True(t, rep.Done)
}
