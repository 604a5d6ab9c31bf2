package view_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/view"
	"github.com/mdap-go/mdap/vote"
)

// docs/view.md: a batch lists at most MaxBatchRows tasks, the running
// ones first, and counts them all.
func TestBatchListIsBounded(t *testing.T) {
	t.Parallel()
	b := view.NewBatch("x", 0)
	for i := range view.MaxBatchRows + 5 {
		st := view.StatusQueued
		if i == view.MaxBatchRows+3 {
			st = view.StatusRunning
		}
		b.Put(view.BatchTask{Name: fmt.Sprint(i), Status: st}, nil, nil)
	}
	s := b.Stats()
	assert.Equal(t, view.MaxBatchRows+5, s.Tasks)
	assert.Equal(t, view.MaxBatchRows, s.Listed)
	assert.Len(t, s.List, view.MaxBatchRows)
	assert.Equal(t, fmt.Sprint(view.MaxBatchRows+3), s.List[0].Name, "the running task first, though it is near the end")
}

// docs/view.md: at most MaxRaceSamples samples of a step are kept, the
// others counted; at most MaxWorkers workers apart.
func TestRaceAndWorkersAreBounded(t *testing.T) {
	t.Parallel()
	s := &maker.Solver{}
	live := view.Attach(s, view.Info{Task: "t", Model: "m"})
	n := view.MaxRaceSamples + 6
	for i := range n {
		s.OnSample(maker.SampleEvent{Step: 0, Index: i, Model: "m", Key: 1, Worker: fmt.Sprint("w", i%(view.MaxWorkers+10))})
	}
	for i := range view.MaxWorkers + 10 - n {
		s.OnSample(maker.SampleEvent{Step: 0, Index: n + i, Model: "m", Flag: errors.New("x"), Worker: fmt.Sprint("w", n+i)})
	}
	step := &journal.StepRecord{Step: 0, K: 3, Key: "1", Votes: map[string]int{"1": n}, Counts: vote.Counts{Valid: n, Flagged: view.MaxWorkers + 10 - n}}
	for i := range view.MaxWorkers + 10 {
		x := journal.SampleRecord{Index: i}
		if i >= n {
			x.Flag = "x"
		}
		step.Samples = append(step.Samples, x)
	}
	s.Progress(maker.Event{Step: 0, Record: step})
	b, err := live.Record(0)
	require.NoError(t, err)
	var rec raceRecord
	require.NoError(t, json.Unmarshal(b, &rec))
	assert.Len(t, rec.Samples, view.MaxRaceSamples)
	assert.Equal(t, view.MaxWorkers+10-view.MaxRaceSamples, rec.MoreSamples)
	ws := live.Run().Stats().Workers
	assert.Len(t, ws, view.MaxWorkers+1, "MaxWorkers apart and the others together")
	total := 0
	for _, w := range ws {
		total += w.Samples
		if w.Worker == view.OtherWorkers {
			assert.Equal(t, 10, w.Samples)
		}
	}
	assert.Equal(t, view.MaxWorkers+10, total, "every sample counted")
}

// docs/view.md: at most MaxFolderJournals journals of a folder are
// followed, and the batch says there are more.
func TestFolderFollowsABoundedNumberOfJournals(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 4097 files")
	}
	dir := t.TempDir()
	_, lines, _ := realJournal(t, 2)
	for i := range view.MaxFolderJournals + 1 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("t%05d-0123456789ab.jsonl", i)), lines[0], 0o600))
	}
	f, err := view.OpenFolder(dir, "", 0)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Read())
	st := f.Batch().Stats()
	assert.Equal(t, view.MaxFolderJournals, st.Tasks)
	assert.True(t, strings.Contains(st.Err, "more than 4096 journals"), st.Err)
}
