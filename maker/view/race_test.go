package view_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/view"
	"github.com/mdap-go/mdap/vote"
	"github.com/mdap-go/mdap/vote/laws"
)

// raceRecord is a step's record as a Live answers it.
type raceRecord struct {
	journal.StepRecord
	Samples     []view.Sample `json:"samples"`
	MoreSamples int           `json:"more_samples"`
}

// A Live's step record lists the race: every sample the step drew, in
// index order, each as the solver's OnSample saw it come back (model,
// worker, tokens, red flag) and with its class; the votes per class are
// the record's votes, the red-flagged and failed ones its counts, and the
// winner's votes are marked.
func TestLiveKeepsEachStepsRace(t *testing.T) {
	t.Parallel()
	s := solver(t) // red flags and wrong answers
	s.Model = withWorkers{s.Model}
	seen := map[int][]maker.SampleEvent{}
	var mu sync.Mutex
	s.OnSample = func(e maker.SampleEvent) {
		mu.Lock()
		defer mu.Unlock()
		seen[e.Step] = append(seen[e.Step], e)
	}
	task, err := hanoi.New(6)
	require.NoError(t, err)
	live := view.Attach(s, view.SolverInfo(s, task))
	_, err = s.Solve(context.Background(), task)
	require.NoError(t, err)

	sawFlag, sawWrong := false, false
	for step := range hanoi.TotalSteps(6) {
		b, err := live.Record(step)
		require.NoError(t, err)
		var rec raceRecord
		require.NoError(t, json.Unmarshal(b, &rec))
		require.Equal(t, step, rec.Step)
		events := seen[step]
		sort.Slice(events, func(i, j int) bool { return events[i].Index < events[j].Index })
		require.Len(t, rec.Samples, len(events), "step %d: every sample drawn", step)
		votes, flagged, failed, wins := map[string]int{}, 0, 0, 0
		var tokens int
		for i, x := range rec.Samples {
			e := events[i]
			assert.Equal(t, e.Index, x.Index, "step %d: in index order", step)
			assert.Equal(t, e.Model, x.Model, "step %d sample %d", step, x.Index)
			assert.Equal(t, e.Worker, x.Worker, "step %d sample %d", step, x.Index)
			assert.NotEmpty(t, x.Worker)
			assert.Equal(t, e.Usage.InputTokens, x.InputTokens, "step %d sample %d", step, x.Index)
			assert.Equal(t, e.Usage.OutputTokens, x.OutputTokens, "step %d sample %d", step, x.Index)
			switch x.Class {
			case view.ClassFlagged:
				flagged++
				require.NotNil(t, e.Flag)
				assert.Equal(t, e.Reason.Error(), x.Flag, "a red flag says why")
				sawFlag = true
			case view.ClassError:
				failed++
			default:
				votes[x.Class]++
				assert.Equal(t, strconv.FormatUint(e.Key, 16), x.Class, "step %d sample %d: exact keys are their classes", step, x.Index)
			}
			if x.Winner {
				wins++
				assert.Equal(t, rec.Key, x.Class)
			}
			assert.NotEmpty(t, x.Model)
			tokens += x.InputTokens
		}
		assert.Equal(t, rec.Votes, votes, "step %d: the samples' classes are its votes", step)
		assert.Equal(t, rec.Flagged, flagged, "step %d", step)
		assert.Equal(t, rec.Errors, failed, "step %d", step)
		assert.Equal(t, rec.Votes[rec.Key], wins, "step %d: the winner's votes are marked", step)
		assert.Equal(t, rec.Usage.InputTokens, tokens, "step %d: the samples' tokens are the step's", step)
		sawWrong = sawWrong || len(votes) > 1
	}
	assert.True(t, sawFlag && sawWrong, "the run had red flags and wrong answers to show")
}

// withWorkers names a worker on each reply, as a model served by engine
// workers does (maker.WorkerInfoKey): one of three, by the sample's index.
type withWorkers struct{ llms.Model }

func (m withWorkers) Identity() string { return maker.ModelIdentity(m.Model) }

func (m withWorkers) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	r, err := m.Model.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		return r, err
	}
	id, _ := maker.SampleIDFrom(ctx)
	for _, c := range r.Choices {
		if c.GenerationInfo == nil {
			c.GenerationInfo = map[string]any{}
		}
		c.GenerationInfo[maker.WorkerInfoKey] = fmt.Sprint("worker-", id.Index%3)
	}
	return r, nil
}

// The race of every step read back from the run's journal (maker view
// JOURNAL, a click on the step) is the race the run's own view showed
// live: the same samples, models, workers, classes, red flags, tokens
// and winner marks, and the same record; for an ensemble of two models
// drawing through named workers.
func TestJournalRaceIsTheLiveRace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journalfile.Create(path)
	require.NoError(t, err)
	s := solver(t)
	c := sim.DefaultConfig()
	c.Seed, c.P, c.FlagRate = 8, 0.85, 0.05
	other, err := sim.New(hanoi.Oracle{}, c)
	require.NoError(t, err)
	ens, err := maker.NewEnsemble(withWorkers{s.Model}, withWorkers{other})
	require.NoError(t, err)
	s.Model, s.Journal = ens, j
	task, err := hanoi.New(6)
	require.NoError(t, err)
	live := view.Attach(s, view.SolverInfo(s, task))
	_, err = s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, j.Close())

	f, err := view.OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Read()
	require.NoError(t, err)
	models := map[string]bool{}
	for step := range hanoi.TotalSteps(6) {
		want, err := live.Record(step)
		require.NoError(t, err)
		got, err := f.Record(step)
		require.NoError(t, err)
		var w, g raceRecord
		require.NoError(t, json.Unmarshal(want, &w))
		require.NoError(t, json.Unmarshal(got, &g))
		require.NotEmpty(t, w.Samples, "step %d", step)
		assert.Equal(t, w.Samples, g.Samples, "step %d: the journal's race is the live one", step)
		assert.JSONEq(t, string(want), string(got), "step %d: the whole record", step)
		for _, x := range g.Samples {
			models[x.Model] = true
		}
	}
	assert.Len(t, models, 2, "each sample names its member")
}

// Workers: a remote run's samples are counted by the worker that drew
// them, and a valid vote for an answer that lost is charged to its
// worker.
func TestLiveCountsWorkers(t *testing.T) {
	t.Parallel()
	s := &maker.Solver{}
	live := view.Attach(s, view.Info{Task: "t", Model: "m"})
	win, lose := uint64(0xa), uint64(0xb)
	for i, e := range []maker.SampleEvent{
		{Worker: "w1", Key: win}, {Worker: "w2", Key: lose}, {Worker: "w1", Key: win},
		{Worker: "w2", Flag: errors.New("cut off")}, {Worker: "w3", Err: errors.New("down")}, {Worker: "w1", Key: win},
	} {
		e.Step, e.Index, e.Model = 0, i, "m"
		s.OnSample(e)
	}
	rec := &journal.StepRecord{Step: 0, K: 2, Key: strconv.FormatUint(win, 16),
		Votes: map[string]int{"a": 3, "b": 1}, Counts: vote.Counts{Valid: 4, Flagged: 1, Errors: 1},
		Samples: []journal.SampleRecord{{Index: 0, Worker: "w1"}, {Index: 1, Worker: "w2", Class: "b"}, {Index: 2, Worker: "w1"},
			{Index: 3, Worker: "w2", Flag: "cut off"}, {Index: 4, Worker: "w3", Error: true, Model: "strong"}, {Index: 5, Worker: "w1"}}}
	s.Progress(maker.Event{Step: 0, Record: rec})
	b, err := live.Record(0)
	require.NoError(t, err)
	var race raceRecord
	require.NoError(t, json.Unmarshal(b, &race))
	require.Len(t, race.Samples, 6)
	assert.Equal(t, "strong", race.Samples[4].Model, "a sample's own model (an escalated race's) is shown")
	assert.Equal(t, "b", race.Samples[1].Class)
	assert.True(t, race.Samples[0].Winner)
	ws := live.Run().Stats().Workers
	require.Len(t, ws, 3)
	assert.Equal(t, view.WorkerStats{Worker: "w1", Samples: 3, Valid: 3}, zeroTime(ws[0]))
	assert.Equal(t, view.WorkerStats{Worker: "w2", Samples: 2, Valid: 1, Flagged: 1, Lost: 1}, zeroTime(ws[1]))
	assert.Equal(t, view.WorkerStats{Worker: "w3", Samples: 1, Errors: 1}, zeroTime(ws[2]))
	assert.False(t, ws[0].Last.IsZero())
}

func zeroTime(w view.WorkerStats) view.WorkerStats {
	w.Last = time.Time{}
	return w
}

// The failure budget is vote/laws' estimate from the pooled votes: 1 -
// PFull at a fixed k, over 1 - T, and projected over the task's steps.
func TestBudgetIsTheLawsEstimate(t *testing.T) {
	t.Parallel()
	run := view.NewRun(view.Info{Task: "hanoi:N=7", K: 3, Total: 127})
	run.SetLimits(0.9, 2.5)
	for step := range 100 { // 100 steps of 4 valid votes, 3 for the winner: p̂ = 0.75
		run.Add(&journal.StepRecord{Step: step, K: 3, Key: "a", Votes: map[string]int{"a": 3, "b": 1}, Counts: vote.Counts{Valid: 4}})
	}
	st := run.Stats()
	b := st.Budget
	assert.Equal(t, 0.9, b.Target)
	assert.Equal(t, 2.5, st.CostCap)
	assert.InDelta(t, 0.75, b.PHat, 1e-12)
	want := 1 - laws.PFull(100, 3, 0.75)
	assert.InDelta(t, want, b.Spent, 1e-12)
	assert.InDelta(t, 1-laws.PFull(127, 3, 0.75), b.Projected, 1e-12)
	assert.InDelta(t, want/0.1, b.Share, 1e-9)
	assert.Greater(t, b.Share, 1.0, "p̂ 0.75 at k=3 over 100 steps overspends a 10% budget")

	none := view.NewRun(view.Info{Task: "x", K: 3})
	none.Add(&journal.StepRecord{Step: 0, K: 3, Key: "a", Votes: map[string]int{"a": 3}, Counts: vote.Counts{Valid: 3}})
	nb := none.Stats().Budget
	assert.Equal(t, 0.0, nb.Spent, "no wrong vote: nothing spent")
	assert.Equal(t, -1.0, nb.Share, "no target")
	assert.Equal(t, -1.0, nb.Projected, "no total")
	assert.False(t, math.IsNaN(nb.PHat))
}

// A journal of format version 4 (before each step kept its samples) opens
// in the view with its steps' counts and no race; one of a version newer
// than this build's is refused, saying a newer mdap wrote it.
func TestJournalVersionsInTheView(t *testing.T) {
	t.Parallel()
	f, err := view.OpenFile(filepath.Join("..", "testdata", "v4-hanoi6.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Read()
	require.NoError(t, err)
	assert.Equal(t, 40, f.Run().Stats().Steps)
	b, err := f.Record(7)
	require.NoError(t, err)
	var rec raceRecord
	require.NoError(t, json.Unmarshal(b, &rec))
	assert.Equal(t, 7, rec.Step)
	assert.Equal(t, 3, rec.Valid)
	assert.Nil(t, rec.Samples, "not recorded")

	path := filepath.Join(t.TempDir(), "new.jsonl")
	appendLines(t, path, []byte(fmt.Sprintf(`{"mdap_journal":%d,"run":"0123456789abcdef0123456789abcdef","task":"hanoi:N=3","settings":{"model":"sim","k":3},"chain":"00"}`+"\n", journal.Version+1)))
	f, err = view.OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Read()
	require.ErrorIs(t, err, view.ErrNotJournal)
	assert.Contains(t, err.Error(), "a newer mdap wrote it")
}
