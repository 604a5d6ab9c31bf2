package view_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/view"
)

// stateFolder writes a batch's state folder as maker solve leaves it
// mid-run: h5's journal whole (its result recorded), h7's half written,
// a decomposition's journal, and a results file with h5's result and an
// invalid line that has no journal. It returns the folder, the results
// file and h7's journal lines.
func stateFolder(t *testing.T) (dir, results string, h7 [][]byte) {
	root := t.TempDir()
	dir = filepath.Join(root, "st")
	require.NoError(t, os.Mkdir(dir, 0o700))
	_, h5, _ := realJournal(t, 5)
	appendLines(t, filepath.Join(dir, "h5-0123456789ab.jsonl"), h5...)
	_, h7, _ = realJournal(t, 7)
	appendLines(t, filepath.Join(dir, "h7-ba9876543210.jsonl"), h7[:60]...)
	appendLines(t, filepath.Join(dir, "m1-aaaaaaaaaaaa.jsonl"),
		[]byte(`{"mdap_decompose":1,"family":"multiply","input":{"a":"12","b":"3"},"chain":"x"}`+"\n"),
		[]byte(`{"node":"r","role":"atomic","value":false,"samples":3,"cost":0.25,"wall_ns":1,"chain":"y"}`+"\n"),
		[]byte(`{"node":"r","role":"decompose","value":{},"samples":4,"cost":0.5,"wall_ns":1,"chain":"z"}`+"\n"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o600))
	results = filepath.Join(root, "results.jsonl")
	appendLines(t, results,
		[]byte(`{"id":"bad","line":4,"status":"invalid","steps":0,"samples":0,"cost":0,"error":"bad task line"}`+"\n"),
		[]byte(`{"id":"h5","line":1,"kind":"hanoi","status":"solved","steps":31,"samples":99,"cost":0.125,"journal":"st/h5-0123456789ab.jsonl"}`+"\n"))
	return dir, results, h7
}

func byName(st view.BatchStats) map[string]view.BatchTask {
	m := map[string]view.BatchTask{}
	for _, t := range st.List {
		m[t.Name] = t
	}
	return m
}

// A state folder is shown as its batch: each journal a task, by status
// (its result's, else from its journal), each step loop's run its own;
// journals and lines appended later are picked up.
func TestFolderShowsTheBatchByStatus(t *testing.T) {
	t.Parallel()
	dir, results, h7 := stateFolder(t)
	f, err := view.OpenFolder(dir, results, 3)
	require.NoError(t, err)
	defer f.Close()
	f.SetTarget(0.95)
	require.NoError(t, f.Read())
	st := f.Batch().Stats()
	assert.Equal(t, 4, st.Tasks)
	assert.Equal(t, map[string]int{"solved": 1, "invalid": 1, "unfinished": 2}, st.ByStatus)
	assert.Equal(t, 3.0, st.CostCap)
	tasks := byName(st)
	h5 := tasks["h5-0123456789ab.jsonl"]
	assert.Equal(t, view.BatchTask{Name: "h5-0123456789ab.jsonl", ID: "h5", Kind: "hanoi", Line: 1, Status: "solved",
		Steps: 31, Total: 31, Samples: 99, Cost: 0.125, Openable: true}, h5, "a result is what the page shows of a finished task")
	h7t := tasks["h7-ba9876543210.jsonl"]
	assert.Equal(t, "h7", h7t.ID)
	assert.Equal(t, "hanoi", h7t.Kind, "from its fingerprint")
	assert.Equal(t, view.StatusUnfinished, h7t.Status)
	assert.Equal(t, 127, h7t.Total)
	assert.Equal(t, countSteps(h7[:60]), h7t.Steps)
	assert.True(t, h7t.Openable)
	m1 := tasks["m1-aaaaaaaaaaaa.jsonl"]
	assert.Equal(t, view.BatchTask{Name: "m1-aaaaaaaaaaaa.jsonl", ID: "m1", Kind: "multiply", Status: view.StatusUnfinished,
		Steps: 2, Samples: 7, Cost: 0.75}, m1, "a decomposition's decisions are counted; it has no step map")
	assert.Equal(t, "invalid", tasks["bad"].Status)
	assert.False(t, tasks["bad"].Openable)

	run, recs, ok := f.Batch().Task("h7-ba9876543210.jsonl")
	require.True(t, ok)
	_, err = recs.Record(3)
	require.NoError(t, err)
	assert.Equal(t, "hanoi:N=7", run.Stats().Task)
	assert.Equal(t, 0.95, run.Stats().Target, "SetTarget's T, the journal recording none")

	// The run goes on: h7 is decided whole, a new task's journal appears.
	appendLines(t, filepath.Join(dir, "h7-ba9876543210.jsonl"), h7[60:]...)
	_, h3, _ := realJournal(t, 3)
	appendLines(t, filepath.Join(dir, "h3-cccccccccccc.jsonl"), h3[:1]...)
	require.NoError(t, f.Read())
	st = f.Batch().Stats()
	assert.Equal(t, 5, st.Tasks)
	tasks = byName(st)
	assert.Equal(t, view.StatusDecided, tasks["h7-ba9876543210.jsonl"].Status, "every step decided, no result yet")
	assert.Equal(t, 127, tasks["h7-ba9876543210.jsonl"].Steps)
	assert.Equal(t, 0, tasks["h3-cccccccccccc.jsonl"].Steps)
	appendLines(t, results, []byte(`{"id":"h7","line":2,"kind":"hanoi","status":"failed","steps":127,"samples":400,"cost":1,"error":"not solved","journal":"st/h7-ba9876543210.jsonl"}`+"\n"))
	require.NoError(t, f.Read())
	assert.Equal(t, "failed", byName(f.Batch().Stats())["h7-ba9876543210.jsonl"].Status)

	_, err = view.OpenFolder(filepath.Join(dir, "h5-0123456789ab.jsonl"), "", 0)
	assert.ErrorIs(t, err, view.ErrPath, "a journal is not a folder")
}

// Served, a batch's page state is the batch; ?task=NAME makes every
// address answer for that task's run, and an unknown task is 404.
func TestBatchServesEachTasksRun(t *testing.T) {
	t.Parallel()
	dir, results, _ := stateFolder(t)
	f, err := view.OpenFolder(dir, results, 0)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Read())
	h, err := view.Handler(view.Config{Batch: f.Batch()})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	getJSON := func(path string, into any) int {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK && into != nil {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(into))
		}
		return resp.StatusCode
	}
	var state struct {
		Stats *view.Stats      `json:"stats"`
		Batch *view.BatchStats `json:"batch"`
	}
	require.Equal(t, http.StatusOK, getJSON("/state", &state))
	require.NotNil(t, state.Batch)
	assert.Nil(t, state.Stats)
	assert.Equal(t, 4, state.Batch.Tasks)

	task := "?task=" + url.QueryEscape("h5-0123456789ab.jsonl")
	state.Batch, state.Stats = nil, nil
	require.Equal(t, http.StatusOK, getJSON("/state"+task, &state))
	require.NotNil(t, state.Stats)
	assert.Equal(t, 31, state.Stats.Steps)
	assert.Equal(t, "hanoi:N=5", state.Stats.Task)
	var rec map[string]any
	require.Equal(t, http.StatusOK, getJSON("/step/30"+task, &rec))
	assert.EqualValues(t, 30, rec["step"])
	resp, err := http.Get(srv.URL + "/cells" + task)
	require.NoError(t, err)
	cells, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Len(t, cells, 31)

	for _, path := range []string{"/state?task=nope", "/step/1?task=nope", "/cells?task=nope", "/cells", "/map.png",
		"/state?task=" + url.QueryEscape("m1-aaaaaaaaaaaa.jsonl")} {
		assert.Equal(t, http.StatusNotFound, getJSON(path, nil), path)
	}
}

// The batch's event stream sends the batch again when a task's status
// changes.
func TestBatchEventsFollowStatuses(t *testing.T) {
	t.Parallel()
	b := view.NewBatch("tasks.jsonl", 0)
	b.Put(view.BatchTask{Name: "a", ID: "a", Status: view.StatusQueued}, nil, nil)
	h, err := view.Handler(view.Config{Batch: b})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var seen []string
	for sc.Scan() && len(seen) < 3 {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		var st view.BatchStats
		require.NoError(t, json.Unmarshal([]byte(line[len("data: "):]), &st))
		seen = append(seen, st.List[0].Status)
		switch len(seen) {
		case 1:
			b.Update("a", func(t *view.BatchTask) { t.Status = view.StatusRunning })
		case 2:
			b.Update("a", func(t *view.BatchTask) { t.Status = view.StatusSolved })
		}
	}
	assert.Equal(t, []string{"queued", "running", "solved"}, seen)
}
