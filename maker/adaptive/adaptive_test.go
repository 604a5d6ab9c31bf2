package adaptive_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"

	"github.com/mdap-go/mdap/internal/stats"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAdaptiveKDefaultsAndRanges(t *testing.T) {
	a, err := adaptive.Policy{Target: 0.95, Steps: 10}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, adaptive.Policy{Target: 0.95, Steps: 10, Floor: 4, Max: 30, Confidence: 0.975, Window: 500}, a)
	a, err = adaptive.Policy{Target: 0.95, Steps: 10, Floor: 40}.WithDefaults()
	require.NoError(t, err)
	assert.Equal(t, 40, a.Max, "a floor above the default max raises it")

	for _, c := range []struct {
		field string
		bad   adaptive.Policy
	}{
		{"Target", adaptive.Policy{Target: 1, Steps: 10}},
		{"Target", adaptive.Policy{Target: math.NaN(), Steps: 10}},
		{"Steps", adaptive.Policy{Target: 0.9, Steps: 0}},
		{"Floor", adaptive.Policy{Target: 0.9, Steps: 10, Floor: 1}},
		{"Max", adaptive.Policy{Target: 0.9, Steps: 10, Floor: 5, Max: 4}},
		{"Max", adaptive.Policy{Target: 0.9, Steps: 10, Max: 1 << 20}},
		{"Confidence", adaptive.Policy{Target: 0.9, Steps: 10, Confidence: 0.4}},
		{"Confidence", adaptive.Policy{Target: 0.95, Steps: 10, Confidence: 0.95}},
		{"Window", adaptive.Policy{Target: 0.9, Steps: 10, Window: 5}},
	} {
		_, err := c.bad.WithDefaults()
		require.ErrorIs(t, err, maker.ErrConfig, "%+v", c.bad)
		assert.Contains(t, err.Error(), c.field, "the error names the field")
	}
}

func TestAdaptiveKChoice(t *testing.T) {
	// Confidence near 1: the steps' budget is nearly (1 - Target)/2.
	a, err := adaptive.Policy{Target: 0.95, Steps: 4095, Confidence: 0.999999}.WithDefaults()
	require.NoError(t, err)
	assert.InDelta(t, 0.025, a.StepBudget(), 1e-6)
	var none adaptive.FailureBudget
	k, ok := a.Choose(0, 0, none)
	assert.Equal(t, [2]any{a.Max, false}, [2]any{k, ok}, "no votes: the first step runs at Max, outside the rule")
	k, _ = a.Choose(0, 0.5, none)
	assert.Equal(t, a.Max, k, "a bound at 1/2: no margin helps, Max")
	k, ok = a.Choose(0, 0.999999, none)
	assert.Equal(t, [2]any{a.Floor, true}, [2]any{k, ok}, "a bound near 1: the floor")
	// At a bound of 0.95 with nothing spent: 4095·f(0.95, 5) = 0.00165 <=
	// 0.025 < 4095·f(0.95, 4) = 0.0314.
	k, ok = a.Choose(0, 0.95, none)
	assert.Equal(t, [2]any{5, true}, [2]any{k, ok})
	// With 0.024 spent, the remaining 0.001 needs k = 6 for 4095 steps.
	k, _ = a.Choose(0, 0.95, adaptive.FailureBudget{Spent: 0.024})
	assert.Equal(t, 6, k)
	k, ok = a.Choose(0, 0.95, adaptive.FailureBudget{Spent: 0.0251})
	assert.Equal(t, [2]any{a.Max, false}, [2]any{k, ok}, "a spent budget: Max, and no k keeps the rule")

	prev := a.Max
	for b := 0.9; b < 1; b += 0.005 {
		k, _ := a.Choose(0, b, none)
		assert.LessOrEqual(t, k, prev, "a higher bound never raises k (b=%g)", b)
		assert.GreaterOrEqual(t, k, a.Floor)
		prev = k
	}
	k, _ = a.Choose(4094, 0.95, adaptive.FailureBudget{Spent: 0.02})
	assert.Equal(t, a.Floor, k, "the last step alone, 0.005 left: f(0.95, 2) = 0.0028 would do; the floor")
}

func TestAdaptiveKBoundsClusterAndWindow(t *testing.T) {
	a, err := adaptive.Policy{Target: 0.95, Steps: 1000, Window: 100}.WithDefaults()
	require.NoError(t, err)
	// Alike steps: 9 of 10 right each; a design effect of 1 (no spread
	// beyond the binomial's is seen with identical clusters: below 1,
	// clamped).
	var st adaptive.KState
	for i := range 200 {
		a.Observe(&st, i, 3, 9, 10)
	}
	b := a.Bounds(st.PTally)
	assert.InDelta(t, 0.9, b.P, 1e-12)
	assert.Equal(t, 1.0, b.DesignEffect)
	assert.InDelta(t, stats.WilsonLower(0.9, 2000, a.Confidence), b.Lower, 1e-12)
	assert.InDelta(t, 0.9, b.WindowP, 1e-12)
	assert.InDelta(t, 100, b.WindowVotes, 2, "the window's effective size")
	assert.Less(t, b.WindowLower, b.Lower, "fewer votes, a looser bound")
	assert.Equal(t, b.WindowLower, b.Planning, "plans with the smaller")

	// The same share, from steps all right or all wrong: the clusters
	// carry the information, not the votes.
	var sp adaptive.KState
	for i := range 200 {
		x := 10
		if i%10 == 0 {
			x = 0
		}
		a.Observe(&sp, i, 3, x, 10)
	}
	bs := a.Bounds(sp.PTally)
	assert.InDelta(t, 0.9, bs.P, 1e-12)
	assert.InDelta(t, 10, bs.DesignEffect, 0.2, "ten votes of a step count as one")
	assert.Less(t, bs.Lower, b.Lower-0.02)

	// Drift: 0.999 for long, then 0.8: the change-point test sees it
	// within two steps, the evidence restarts from the change point and
	// the planned k rises.
	var d adaptive.KState
	for i := range 2000 {
		x := 10
		if i%10 == 0 {
			x = 9
		}
		a.Observe(&d, i, 3, x, 10)
	}
	require.Zero(t, d.Drift.Changes, "no change while p holds")
	kBefore, _, _ := a.Next(2000, d)
	seen := -1
	for i := range 20 {
		a.Observe(&d, 2000+i, 3, 8, 10)
		if d.Drift.Changes > 0 && seen < 0 {
			seen = i + 1
		}
	}
	assert.Equal(t, 1, d.Drift.Changes)
	assert.LessOrEqual(t, seen, 2, "seen within two steps of the drop")
	after := a.Bounds(d.PTally)
	assert.Less(t, after.P, 0.85, "the estimate is of the steps since the change")
	kAfter, _, _ := a.Next(2020, d)
	assert.Greater(t, kAfter, kBefore, "k rises")
}

// journaledRun runs 8-disk Hanoi with adaptive k on the simulated model
// (p = 0.9, 5% red flags), journaled at path with a checkpoint every 16
// steps, stopping after stop steps (0: never).
func journaledRun(t *testing.T, path string, resume bool, stop int, policy adaptive.Policy) (maker.Report, *hanoi.Task, error) {
	t.Helper()
	var j *journal.Journal
	var err error
	if resume {
		j, err = journalfile.Open(path)
	} else {
		j, err = journalfile.Create(path)
	}
	require.NoError(t, err)
	j.CheckpointEvery = 16
	task, err := hanoi.New(8)
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{AdaptiveK: &policy, MaxSteps: stop}, Model: simModel(t, 3, 0.9), Journal: j}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, j.Close())
	return rep, task, err
}

// stepKs reads each step's k from a journal.
func stepKs(t *testing.T, path string) []int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var ks []int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Step *int `json:"step"`
			K    int  `json:"k"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Step != nil {
			require.Equal(t, len(ks), *r.Step)
			ks = append(ks, r.K)
		}
	}
	return ks
}

func TestAdaptiveKResumesWithTheSameChoices(t *testing.T) {
	dir := t.TempDir()
	policy := adaptive.Policy{Target: 0.95, Steps: hanoi.TotalSteps(8)}
	whole := filepath.Join(dir, "whole.jsonl")
	want, task, err := journaledRun(t, whole, false, 0, policy)
	require.NoError(t, err)
	require.True(t, task.Solved())
	wantKs := stepKs(t, whole)
	require.Len(t, wantKs, 255)
	assert.Equal(t, adaptive.DefaultMax, wantKs[0], "the first step knows nothing: Max")
	assert.Greater(t, len(want.KHistogram), 1, "k followed the votes")
	assert.Less(t, wantKs[100], wantKs[0])

	// Stopped at step 40 and at step 100 (checkpoints at 16, 32, ...,
	// so the resume restores the totals from one and replays the rest),
	// then resumed to the end: the same k at every step, the same totals.
	for _, stop := range []int{40, 100} {
		path := filepath.Join(dir, "cut.jsonl")
		_ = os.Remove(path)
		_, _, err := journaledRun(t, path, false, stop, policy)
		require.ErrorIs(t, err, maker.ErrStepLimit)
		got, task, err := journaledRun(t, path, true, 0, policy)
		require.NoError(t, err)
		assert.True(t, task.Solved())
		assert.Equal(t, stop, got.Resumed)
		assert.Equal(t, wantKs, stepKs(t, path), "stop %d: every step's k as uninterrupted", stop)
		assert.Equal(t, want.KHistogram, got.KHistogram)
		assert.Equal(t, want.Counts, got.Counts)
		w1, v1 := agreement(want)
		w2, v2 := agreement(got)
		assert.Equal(t, [2]int{w1, v1}, [2]int{w2, v2})
	}
}

func TestAdaptiveKJournalRecordsThePolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	policy := adaptive.Policy{Target: 0.95, Steps: hanoi.TotalSteps(8)}
	_, _, err := journaledRun(t, path, false, 10, policy)
	require.ErrorIs(t, err, maker.ErrStepLimit)

	f, err := os.Open(path)
	require.NoError(t, err)
	var header struct {
		Settings maker.Settings `json:"settings"`
	}
	require.NoError(t, json.NewDecoder(f).Decode(&header))
	f.Close()
	assert.Zero(t, header.Settings.K, "no fixed k")
	require.NotNil(t, header.Settings.KAuto)
	var recorded adaptive.Policy
	require.NoError(t, json.Unmarshal(header.Settings.KAuto, &recorded))
	assert.Equal(t, adaptive.Policy{Target: 0.95, Steps: 255, Floor: 4, Max: 30, Confidence: 0.975, Window: 500}, recorded)

	other := policy
	other.Target = 0.99
	_, _, err = journaledRun(t, path, true, 0, other)
	require.ErrorIs(t, err, journal.ErrMismatch)
	assert.Contains(t, err.Error(), "k_auto: auto(target=0.95 steps=255 floor=4 max=30 confidence=0.975 window=500) in the journal, auto(target=0.99")

	other = policy
	other.Floor = 3
	_, _, err = journaledRun(t, path, true, 0, other)
	require.ErrorIs(t, err, journal.ErrMismatch)
	assert.Contains(t, err.Error(), "floor=3")

	// A fixed k cannot resume an adaptive run.
	j, err := journalfile.Open(path)
	require.NoError(t, err)
	task, err := hanoi.New(8)
	require.NoError(t, err)
	_, err = (&maker.Solver{Model: simModel(t, 3, 0.9), Journal: j}).Solve(context.Background(), task)
	require.NoError(t, j.Close())
	require.ErrorIs(t, err, journal.ErrMismatch)
	assert.Contains(t, err.Error(), "k: 0 in the journal, 3 now")
	assert.Contains(t, err.Error(), "in the journal, none now")

	_, _, err = journaledRun(t, path, true, 0, policy)
	assert.NoError(t, err, "the same policy resumes")
}

func TestAdaptiveKBudgetAndPolicyChecked(t *testing.T) {
	task, err := hanoi.New(3)
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{MaxSamples: 10}, AdaptiveK: &adaptive.Policy{Target: 0.95, Steps: 7}}, Model: simModel(t, 1, 0.99)}
	_, err = s.Solve(context.Background(), task)
	require.ErrorIs(t, err, maker.ErrConfig)
	assert.Contains(t, err.Error(), "Vote.MaxSamples = 10 plus AdaptiveK.Max = 30: Vote.MaxSamples cannot hold a race at AdaptiveK.Max")

	s.AdaptiveK = &adaptive.Policy{Target: 0.95, Steps: 7, Floor: 1}
	_, err = s.Solve(context.Background(), task)
	require.ErrorIs(t, err, maker.ErrConfig)

	s.Vote.MaxSamples = 0
	s.AdaptiveK = &adaptive.Policy{Target: 0.95, Steps: 7, Max: 8}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	assert.True(t, task.Solved())
	assert.Positive(t, rep.KHistogram[8], "the first step runs at Max")
	for k := range rep.KHistogram {
		assert.LessOrEqual(t, k, 8, "never above Max")
		assert.GreaterOrEqual(t, k, adaptive.DefaultFloor, "never below the floor")
	}
}

func TestAdaptiveKPoolsAnEnsemble(t *testing.T) {
	ens, err := maker.NewEnsemble(simModel(t, 1, 0.95), simModel(t, 2, 0.9))
	require.NoError(t, err)
	task, err := hanoi.New(7)
	require.NoError(t, err)
	policy := &adaptive.Policy{Target: 0.95, Steps: hanoi.TotalSteps(7)}
	s := &maker.Solver{Config: maker.Config{AdaptiveK: policy}, Model: ens}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	assert.True(t, task.Solved())
	w, v := agreement(rep)
	assert.Equal(t, rep.Models[0].WinnerVotes+rep.Models[1].WinnerVotes, w)
	assert.Equal(t, rep.Valid, v, "every valid vote of a decided step is counted")
	e := policy.Estimate(rep)
	assert.Equal(t, adaptive.SourceCorrectness, e.Source, "Hanoi checks its answers")
	assert.Equal(t, w, e.Successes, "no wrong step: the correct votes are the winner votes")
	assert.Equal(t, v, e.Valid)
	assert.InDelta(t, float64(w)/float64(v), e.P, 1e-12)
	assert.Less(t, e.Lower, e.P)
	assert.Greater(t, len(rep.KHistogram), 1, "the text shows the steps by k")
}

// TestAdaptiveKOverBudgetStopsByDefault: a model too weak for the target
// within --k-max (p 0.65, Max 5: f(0.65, 5) = 0.043 a step, 63 steps
// against a budget of 0.05). After the warm-up (an eighth of the steps)
// no k keeps the budget: with no escalation policy the run stops with
// ErrOverBudget (an ErrStep) naming what to do, and after every step
// that ran the ledger held at most the budget; with raise-k the run goes
// on at twice Max, every such step counted over budget and the estimate
// saying so. Broken on purpose (stepConfig ignoring KOver, the old
// behaviour: run on at Max and charge) the run ends without an error and
// the ledger goes past the budget (seen: no error, 5.16 spent of 0.05).
func TestAdaptiveKOverBudgetStopsByDefault(t *testing.T) {
	policy := adaptive.Policy{Target: 0.95, Steps: hanoi.TotalSteps(6), Max: 5}
	run := func(esc *maker.Escalation) (maker.Report, float64, error) {
		task, err := hanoi.New(6)
		require.NoError(t, err)
		worst := 0.0
		s := &maker.Solver{Config: maker.Config{AdaptiveK: &policy, Escalation: esc}, Model: simModel(t, 11, 0.65)}
		s.Progress = func(e maker.Event) { worst = math.Max(worst, e.Report.KAuto.(*adaptive.KState).Spent) }
		rep, err := s.Solve(context.Background(), task)
		return rep, worst, err
	}
	rep, worst, err := run(nil)
	require.ErrorIs(t, err, maker.ErrOverBudget)
	require.ErrorIs(t, err, maker.ErrStep)
	assert.Contains(t, err.Error(), "no k up to the maximum 5 keeps the failure budget of 0.0125")
	assert.Contains(t, err.Error(), "stopped (escalation policy stop, the default): raise the maximum k, lower the target")
	assert.LessOrEqual(t, worst, 0.0125+1e-12, "the ledger within the budget after every step")
	assert.Less(t, rep.Steps, 63, "stopped before the end")
	assert.GreaterOrEqual(t, rep.Steps, 7, "not before the warm-up's end")
	assert.Zero(t, rep.KAuto.(*adaptive.KState).OverBudget)

	rep, _, err = run(&maker.Escalation{Policy: maker.EscalateRaiseK})
	require.NoError(t, err)
	assert.Positive(t, rep.KAuto.(*adaptive.KState).OverBudget)
	assert.Positive(t, rep.KHistogram[10], "over budget: the escalation's k, twice Max")
	assert.Contains(t, policy.Estimate(rep).String(), "over budget (no k up to the maximum kept it: the target is not guaranteed)")
}

// agreement is the valid votes that went to their step's winner and all
// valid votes, summed over rep's models.
func agreement(rep maker.Report) (winnerVotes, valid int) {
	for _, m := range rep.Models {
		winnerVotes += m.WinnerVotes
		valid += m.Valid
	}
	return winnerVotes, valid
}
