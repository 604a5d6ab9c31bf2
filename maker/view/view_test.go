package view_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/view"
)

// A journal written by a real run, read whole, says what the run's
// report says.
func TestFileStatsAreTheRunsReport(t *testing.T) {
	t.Parallel()
	path, _, rep := realJournal(t, 9)
	j, err := view.OpenFile(path)
	require.NoError(t, err)
	defer j.Close()
	_, err = j.Read()
	require.NoError(t, err)
	st := j.Run().Stats()
	assert.Equal(t, "hanoi:N=9", st.Task)
	assert.Equal(t, 511, st.Total)
	assert.Equal(t, rep.Steps, st.Steps)
	assert.Equal(t, 0, st.Left)
	assert.True(t, st.Done)
	assert.Equal(t, rep.Counts, st.Counts)
	assert.Equal(t, rep.Flags, st.Flags)
	assert.Equal(t, rep.Usage, st.Usage)
	assert.Equal(t, rep.StepTime, st.StepTime)
	assert.Greater(t, st.Flagged, 0, "the run has red flags to show")
	assert.InDelta(t, float64(rep.Flagged)/float64(rep.Valid+rep.Flagged+rep.Errors), st.FlagRate, 1e-12)
	assert.Equal(t, 500, st.CostStep, "the cost of the last checkpoint, before step 500")
	require.Len(t, st.Models, 1)
	assert.Equal(t, rep.Models[0].WinnerVotes, st.Models[0].WinnerVotes)
	assert.Equal(t, rep.Models[0].Usage, st.Models[0].Usage)
	assert.Equal(t, 16, st.Width)
	assert.Equal(t, 32, st.Height)
}

// The same run, fed in process (Attach), shows the numbers its journal
// shows.
func TestLiveShowsWhatItsJournalShows(t *testing.T) {
	t.Parallel()
	path, _, _ := realJournal(t, 7)
	j, err := view.OpenFile(path)
	require.NoError(t, err)
	defer j.Close()
	_, err = j.Read()
	require.NoError(t, err)

	s := solver(t) // the same seed: the same run
	task, err := hanoi.New(7)
	require.NoError(t, err)
	live := view.Attach(s, view.SolverInfo(s, task))
	_, err = s.Solve(context.Background(), task)
	require.NoError(t, err)

	file, mem := j.Run().Stats(), live.Run().Stats()
	for _, st := range []*view.Stats{&file, &mem} {
		st.Source, st.Run, st.Mdap, st.Signed, st.Cost, st.CostStep, st.StepTime, st.ETA = "", "", "", false, 0, 0, 0, 0
		for i := range st.Models {
			st.Models[i].Usage.Latency = 0
		}
		st.Usage.Latency = 0
	}
	assert.Equal(t, file, mem)
	assert.Equal(t, j.Run().Cells(0), live.Run().Cells(0), "the same map")
	rec, err := live.Record(126)
	require.NoError(t, err)
	fromFile, err := j.Record(126)
	require.NoError(t, err)
	var a, b journal.StepRecord
	require.NoError(t, json.Unmarshal(rec, &a))
	require.NoError(t, json.Unmarshal(fromFile, &b))
	assert.Equal(t, b.Key, a.Key)
	assert.Equal(t, b.Votes, a.Votes)
}

// Every step's record is found again, past the first index entry too,
// as the journal holds it.
func TestRecordIsTheJournalsLine(t *testing.T) {
	t.Parallel()
	path, lines, _ := realJournal(t, 9)
	j, err := view.OpenFile(path)
	require.NoError(t, err)
	defer j.Close()
	_, err = j.Read()
	require.NoError(t, err)
	want := map[int]journal.StepRecord{}
	for _, l := range lines[1:] {
		var rec journal.StepRecord
		if json.Unmarshal(l, &rec) == nil && strings.HasPrefix(string(l), `{"step":`) {
			want[rec.Step] = rec
		}
	}
	require.Len(t, want, 511)
	for _, step := range []int{0, 1, 255, 256, 257, 300, 510} {
		b, err := j.Record(step)
		require.NoError(t, err, step)
		assert.NotContains(t, string(b), `"chain"`)
		var got journal.StepRecord
		require.NoError(t, json.Unmarshal(b, &got), step)
		assert.Equal(t, want[step].Step, got.Step)
		assert.Equal(t, want[step].Key, got.Key)
		assert.Equal(t, want[step].Votes, got.Votes)
		assert.Equal(t, want[step].Winner, got.Winner)
	}
	_, err = j.Record(511)
	assert.ErrorIs(t, err, view.ErrNoStep)
}

// event is one server-sent event.
type event struct{ name, data string }

// readEvents sends the stream's events to ch until it ends.
func readEvents(body io.Reader, ch chan<- event) {
	defer close(ch)
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	var e event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			e.name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			e.data = line[len("data: "):]
		case line == "" && e.name != "":
			ch <- e
			e = event{}
		}
	}
}

// The event stream carries the steps a running run appends to its
// journal, and holds back a line until it is whole.
func TestEventsFollowAGrowingJournal(t *testing.T) {
	t.Parallel()
	_, lines, _ := realJournal(t, 9)
	path := filepath.Join(t.TempDir(), "growing.jsonl")
	appendLines(t, path, lines[:41]...) // the header and 40 steps
	j, err := view.OpenFile(path)
	require.NoError(t, err)
	defer j.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, j.Follow(ctx, 5*time.Millisecond)) })
	defer func() { cancel(); wg.Wait() }()
	h, err := view.Handler(view.Config{Run: j.Run(), Records: j})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ch := make(chan event, 64)
	go readEvents(resp.Body, ch)

	cells := map[int]byte{}
	var last view.Stats
	until := func(what string, done func() bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for !done() {
			select {
			case e, ok := <-ch:
				require.True(t, ok, "the stream ended")
				switch e.name {
				case "cells":
					var c struct {
						From  int    `json:"from"`
						Cells string `json:"cells"`
					}
					require.NoError(t, json.Unmarshal([]byte(e.data), &c))
					b, err := base64.StdEncoding.DecodeString(c.Cells)
					require.NoError(t, err)
					for i, x := range b {
						cells[c.From+i] = x
					}
				case "stats":
					require.NoError(t, json.Unmarshal([]byte(e.data), &last))
				}
			case <-deadline:
				t.Fatalf("%s: not seen; %d cells, last stats %+v", what, len(cells), last)
			}
		}
	}
	until("the first 40 steps", func() bool { return len(cells) == 40 && last.Steps == 40 })
	assert.Equal(t, 471, last.Left)

	// A line half written waits; whole, it comes.
	half := len(lines[41]) / 2
	appendLines(t, path, lines[41][:half])
	time.Sleep(50 * time.Millisecond)
	appendLines(t, path, lines[41][half:])
	until("step 40", func() bool { return len(cells) == 41 && last.Steps == 41 })

	appendLines(t, path, lines[42:]...)
	until("every step", func() bool { return len(cells) == 511 && last.Done })
	for i := range 511 {
		require.NotZero(t, cells[i], "step %d", i)
	}
	assert.Equal(t, j.Run().Cells(0), func() []byte {
		b := make([]byte, 511)
		for i := range b {
			b[i] = cells[i]
		}
		return b
	}())
}

// The PNG has a cell per step, in the palette's colours, and the dark
// colour where no step is.
func TestPNGHasACellPerStep(t *testing.T) {
	t.Parallel()
	path, _, _ := realJournal(t, 7)
	j, err := view.OpenFile(path)
	require.NoError(t, err)
	defer j.Close()
	_, err = j.Read()
	require.NoError(t, err)
	var buf strings.Builder
	require.NoError(t, j.Run().WritePNG(&buf))
	img, err := png.Decode(strings.NewReader(buf.String()))
	require.NoError(t, err)
	w, h := view.Layout(127)
	assert.Equal(t, [2]int{8, 16}, [2]int{w, h})
	assert.Equal(t, w, img.Bounds().Dx())
	assert.Equal(t, h, img.Bounds().Dy())
	pal := view.Palette(3)
	cells := j.Run().Cells(0)
	for i, c := range cells {
		assert.Equal(t, pal[c], img.At(i%w, i/w), "step %d", i)
	}
	assert.Equal(t, pal[0], img.At(127%w, 127/w), "no step 127")
	assert.NotEqual(t, pal[0], pal[3])
}

func TestLayout(t *testing.T) {
	t.Parallel()
	for n, want := range map[int][2]int{0: {1, 1}, 1: {1, 1}, 7: {2, 4}, 127: {8, 16}, 4095: {64, 64}, 1<<20 - 1: {1024, 1024}, 1 << 20: {1024, 1024}, 1<<20 + 1: {1024, 1025}, 1<<21 + 1: {2048, 1025}} {
		w, h := view.Layout(n)
		assert.Equal(t, want, [2]int{w, h}, strconv.Itoa(n))
		assert.GreaterOrEqual(t, w*h, n)
	}
}

// The report holds the counters and the map, with no script and nothing
// it would fetch.
func TestHTMLReportIsSelfContained(t *testing.T) {
	t.Parallel()
	path, _, rep := realJournal(t, 7)
	j, err := view.OpenFile(path)
	require.NoError(t, err)
	defer j.Close()
	_, err = j.Read()
	require.NoError(t, err)
	j.Run().SetLimits(0.9, 2)
	var b strings.Builder
	require.NoError(t, j.Run().WriteHTML(&b))
	s := b.String()
	assert.Contains(t, s, "of 1 − T, T = 0.9", "the failure budget against T")
	assert.Contains(t, s, "cap $2.0000")
	assert.Contains(t, s, `src="data:image/png;base64,`)
	assert.Contains(t, s, "hanoi:N=7")
	assert.Contains(t, s, strconv.Itoa(rep.Valid)+" / "+strconv.Itoa(rep.Flagged))
	assert.NotContains(t, s, "<script")
	assert.NotContains(t, s, "http://")
	assert.NotContains(t, s, "https://")
}

// In process, a step older than the records kept in memory is answered
// from the run's journal file.
func TestLiveFallsBackToItsJournal(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	jr, err := journalfile.Create(path)
	require.NoError(t, err)
	s := solver(t)
	s.Journal = jr
	task, err := hanoi.New(11)
	require.NoError(t, err)
	live := view.Attach(s, view.SolverInfo(s, task))
	_, err = s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.NoError(t, jr.Close())

	_, err = live.Record(0)
	assert.ErrorIs(t, err, view.ErrNoStep, "2047 steps: step 0 is no longer in memory")
	_, err = live.Record(2047 - view.RecentRecords)
	assert.NoError(t, err, "the last RecentRecords steps are")
	f, err := view.OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	recs := view.WithJournal(live, f)
	b, err := recs.Record(0)
	require.NoError(t, err)
	var rec journal.StepRecord
	require.NoError(t, json.Unmarshal(b, &rec))
	assert.Equal(t, 0, rec.Step)
	assert.NotEmpty(t, rec.Key)
	_, err = recs.Record(2047)
	assert.ErrorIs(t, err, view.ErrNoStep)
}

// AttachConfig's records come from memory, then from the Solver's
// journal file; without a journal, only from memory.
func TestAttachConfigReadsItsJournal(t *testing.T) {
	t.Parallel()
	for _, journaled := range []bool{true, false} {
		s := solver(t)
		if journaled {
			jr, err := journalfile.Create(filepath.Join(t.TempDir(), "run.jsonl"))
			require.NoError(t, err)
			s.Journal = jr
		}
		task, err := hanoi.New(11)
		require.NoError(t, err)
		cfg, done := view.AttachConfig(s, view.SolverInfo(s, task))
		_, err = s.Solve(context.Background(), task)
		require.NoError(t, err)
		if journaled {
			require.NoError(t, s.Journal.Close())
		}
		assert.Equal(t, 2047, cfg.Run.Stats().Steps)
		_, err = cfg.Records.Record(2046)
		assert.NoError(t, err, "a recent step, from memory")
		b, err := cfg.Records.Record(0)
		if journaled {
			require.NoError(t, err)
			assert.Contains(t, string(b), `"step":0`)
		} else {
			assert.ErrorIs(t, err, view.ErrNoStep, "no journal: step 0 is gone")
		}
		done()
	}
}
