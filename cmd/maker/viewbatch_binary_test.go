package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batchState is the part of a batch view's /state the tests read.
type batchState struct {
	Batch *struct {
		Tasks    int            `json:"tasks"`
		ByStatus map[string]int `json:"by_status"`
		CostCap  float64        `json:"cost_cap"`
		List     []struct {
			Name     string `json:"name"`
			ID       string `json:"id"`
			Status   string `json:"status"`
			Steps    int    `json:"steps"`
			Openable bool   `json:"openable"`
		} `json:"list"`
	} `json:"batch"`
	Stats *struct {
		Steps int    `json:"steps"`
		Total int    `json:"total"`
		Task  string `json:"task"`
	} `json:"stats"`
}

func getBatchState(t *testing.T, base, token, task string) (int, batchState) {
	t.Helper()
	u := base + "state"
	if task != "" {
		u += "?task=" + url.QueryEscape(task)
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var st batchState
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	}
	return resp.StatusCode, st
}

// maker view STATE_FOLDER: a finished batch's tasks by status (from
// --results), each step loop's run openable with the numbers of its
// journal; exports of a folder are refused with exit status 2.
func TestBinaryViewStateFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks, results, state := filepath.Join(dir, "tasks.jsonl"), filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "st")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id":"h5","hanoi":{"disks":5}}
{"id":"h7","hanoi":{"disks":7}}
{"id":"m1","multiply":{"a":"123","b":"45"}}
{"id":"bad","nope":1}
`), 0o600))
	c := start(t, nil, "solve", tasks, "--out", results, "--state", state, "--progress", "off")
	require.Equal(t, 1, c.wait(t, time.Minute), "one invalid line: %s", c.stderr.String())

	v := start(t, nil, "view", state, "--results", results, "--max-cost", "2")
	base, token := viewURL(t, v), viewToken(t, v)
	code, st := getBatchState(t, base, token, "")
	require.Equal(t, http.StatusOK, code)
	require.NotNil(t, st.Batch)
	assert.Equal(t, 4, st.Batch.Tasks)
	assert.Equal(t, map[string]int{"solved": 3, "invalid": 1}, st.Batch.ByStatus)
	assert.Equal(t, 2.0, st.Batch.CostCap)
	var h7 string
	for _, tk := range st.Batch.List {
		switch tk.ID {
		case "h7":
			h7 = tk.Name
			assert.Equal(t, 127, tk.Steps)
			assert.True(t, tk.Openable)
		case "m1", "bad":
			assert.False(t, tk.Openable, "%s has no step map", tk.ID)
		}
	}
	require.NotEmpty(t, h7)
	code, st = getBatchState(t, base, token, h7)
	require.Equal(t, http.StatusOK, code)
	require.NotNil(t, st.Stats)
	assert.Equal(t, "hanoi:N=7", st.Stats.Task)
	assert.Equal(t, 127, st.Stats.Steps)
	code, _ = getBatchState(t, base, "", "")
	assert.Equal(t, http.StatusUnauthorized, code, "a batch's view needs the token as a run's does")
	require.NoError(t, v.cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, v.wait(t, 30*time.Second))

	for _, args := range [][]string{{"view", state, "--png", filepath.Join(dir, "x.png")}, {"view", filepath.Join(state, "nope"), "--results", results},
		{"view", state, "--target", "1.5"}, {"view", state, "--max-cost", "-1"}, {"view", state, "--max-cost", "NaN"}} {
		c := start(t, nil, args...)
		assert.Equal(t, 2, c.wait(t, time.Minute), "%v: %s", args, c.stderr.String())
	}
	// A folder given as --results: the fix names --results, not the state folder.
	c = start(t, nil, "view", state, "--results", dir)
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "--results: ")
	assert.NotContains(t, c.stderr.String(), "name a state folder")
	assert.NoFileExists(t, filepath.Join(dir, "x.png"))
}

// maker solve --ui: while the batch runs, the page lists its tasks by
// status (one running, one queued with --concurrency 1) and the running
// task's run advances.
func TestBinarySolveUI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id":"a","hanoi":{"disks":12}}
{"id":"b","hanoi":{"disks":12}}
`), 0o600))
	c := start(t, nil, "solve", tasks, "--out", filepath.Join(dir, "results.jsonl"), "--state", filepath.Join(dir, "st"),
		"--concurrency", "1", "--latency", "1ms", "--max-cost", "5", "--progress", "off", "--ui", "127.0.0.1:0")
	base, token := viewURL(t, c), viewToken(t, c)
	var st batchState
	require.Eventually(t, func() bool {
		var code int
		code, st = getBatchState(t, base, token, "")
		return code == http.StatusOK && st.Batch != nil && st.Batch.ByStatus["running"] == 1
	}, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, map[string]int{"running": 1, "queued": 1}, st.Batch.ByStatus)
	assert.Equal(t, 5.0, st.Batch.CostCap)
	running := st.Batch.List[0]
	require.Equal(t, "running", running.Status, "running tasks are listed first")
	require.True(t, running.Openable)
	_, first := getBatchState(t, base, token, running.Name)
	require.NotNil(t, first.Stats)
	assert.Equal(t, 4095, first.Stats.Total)
	require.Eventually(t, func() bool {
		_, now := getBatchState(t, base, token, running.Name)
		return now.Stats != nil && now.Stats.Steps > first.Stats.Steps
	}, 30*time.Second, 20*time.Millisecond, "the running task's counters advance")
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, c.wait(t, 30*time.Second))

	c = start(t, nil, "solve", tasks, "--out", filepath.Join(dir, "never.jsonl"), "--ui", "nonsense")
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "--ui")
	assert.NoFileExists(t, filepath.Join(dir, "never.jsonl"), "a bad --ui writes nothing")
}

// maker hanoi --ui: the event stream ends, when the run does, on the
// numbers that maker view then reads from the run's journal.
func TestBinaryHanoiUIEndsOnItsJournalsNumbers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := filepath.Join(dir, "run.jsonl")
	c := start(t, nil, "hanoi", "--disks", "9", "--ui", "127.0.0.1:0", "--latency", "2ms", "--journal", j, "--progress", "off")
	base, token := viewURL(t, c), viewToken(t, c)
	req, err := http.NewRequest(http.MethodGet, base+"events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	type counters struct {
		Steps   int            `json:"steps"`
		Samples int            `json:"samples"`
		Valid   int            `json:"valid"`
		Flagged int            `json:"flagged"`
		Flags   map[string]int `json:"flags"`
		Usage   struct {
			In  int `json:"input_tokens"`
			Out int `json:"output_tokens"`
		} `json:"usage"`
		Budget struct {
			PHat  float64 `json:"p_hat"`
			Spent float64 `json:"spent"`
		} `json:"budget"`
	}
	var live counters
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() { // until the run ends and closes the stream
		if line := sc.Text(); strings.HasPrefix(line, `data: {"source"`) {
			require.NoError(t, json.Unmarshal([]byte(line[len("data: "):]), &live))
		}
	}
	require.Equal(t, 0, c.wait(t, time.Minute), c.stderr.String())
	assert.Equal(t, 511, live.Steps, "the stream ends on the run's last step")

	v := start(t, nil, "view", j, "--no-auth")
	u := viewURL(t, v)
	r2, err := http.Get(u + "state")
	require.NoError(t, err)
	defer r2.Body.Close()
	var st struct {
		Stats counters `json:"stats"`
	}
	require.NoError(t, json.NewDecoder(r2.Body).Decode(&st))
	assert.Equal(t, live, st.Stats, "maker view of the journal shows the numbers the live page ended on")
	require.NoError(t, v.cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, v.wait(t, 30*time.Second))
}

// maker multiply --ui: the page counts the decomposition's decisions,
// samples and cost from its journal while it runs, and ends on the
// numbers of its summary; --ui without --journal exits 2.
func TestBinaryMultiplyUI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := filepath.Join(dir, "m.jsonl")
	c := start(t, nil, "multiply", "--digits", "6", "--latency", "30ms", "--journal", j, "--json", "--ui", "127.0.0.1:0")
	base, token := viewURL(t, c), viewToken(t, c)
	req, err := http.NewRequest(http.MethodGet, base+"events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	type task struct {
		Status  string `json:"status"`
		Steps   int    `json:"steps"`
		Samples int    `json:"samples"`
	}
	var seen []task
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() { // until the run ends
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			var b struct {
				List []task `json:"list"`
			}
			require.NoError(t, json.Unmarshal([]byte(line[len("data: "):]), &b))
			require.Len(t, b.List, 1)
			seen = append(seen, b.List[0])
		}
	}
	require.Equal(t, 0, c.wait(t, 2*time.Minute), c.stderr.String())
	require.GreaterOrEqual(t, len(seen), 3, "several updates while it ran")
	first, last := seen[0], seen[len(seen)-1]
	assert.Less(t, first.Steps, last.Steps, "the counters advance")
	var sum struct {
		Decisions int `json:"decisions"`
		Samples   int `json:"samples"`
	}
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &sum), c.stdout.String())
	assert.Equal(t, sum.Samples, last.Samples, "the last update is the run's own count")

	c = start(t, nil, "multiply", "--digits", "3", "--ui", "127.0.0.1:0")
	assert.Equal(t, 2, c.wait(t, time.Minute))
	assert.Contains(t, c.stderr.String(), "give --journal FILE")
}
