package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specFile is a spec of testdata, as an absolute path.
func specFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../../testdata/spec", name))
	require.NoError(t, err)
	return p
}

// mixedTasks writes a tasks file of n tasks of mixed kinds in dir: Towers
// of Hanoi of the sizes given, in turn, and both spec tasks, with their
// own seeds and margins.
func mixedTasks(t *testing.T, dir string, n int, disks ...int) string {
	t.Helper()
	var b strings.Builder
	empty := t.TempDir()
	for i := range n {
		switch i % 4 {
		case 0, 1:
			fmt.Fprintf(&b, `{"id": "hanoi-%d", "hanoi": {"disks": %d}, "seed": %d}`+"\n", i, disks[(i/4)%len(disks)], i)
		case 2:
			fmt.Fprintf(&b, `{"id": "find-%d", "spec": %q, "seed": %d, "k": %d}`+"\n", i, specFile(t, "find-version.json"), i, 2+i%3)
		case 3:
			fmt.Fprintf(&b, `{"id": "write-%d", "spec": %q, "root": %q, "seed": %d}`+"\n", i, specFile(t, "write-denied.json"), empty, i)
		}
	}
	p := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

// results reads a results file strictly: whole lines only, each a JSON
// object with a unique id, keyed by id, wall time left out.
func results(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	b := mustRead(t, path)
	out := map[string]map[string]any{}
	if len(b) == 0 {
		return out
	}
	require.Equal(t, byte('\n'), b[len(b)-1], "%s ends with a whole line", path)
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), "a half line in %s: %q", path, l)
		id, _ := r["id"].(string)
		key := id
		if key == "" {
			key = fmt.Sprintf("line:%v", r["line"])
		}
		_, dup := out[key]
		require.False(t, dup, "%s twice in %s", key, path)
		delete(r, "wall_seconds")
		out[key] = r
	}
	return out
}

// simFlags make the simulated model err and red-flag, so votes disagree.
var simArgs = []string{"--p", "0.97", "--flag-rate", "0.03", "--progress", "off"}

func TestSolveMixedBatchSameResultsAtConcurrency4And1(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tasks := mixedTasks(t, root, 24, 2, 3, 4, 5)
	var runs []map[string]map[string]any
	for _, conc := range []string{"1", "4"} {
		dir := filepath.Join(root, "c"+conc)
		out := filepath.Join(dir, "results.jsonl")
		code, stdout, stderr := cli(t, append([]string{"solve", tasks, "--out", out, "--state", filepath.Join(dir, "state"), "--concurrency", conc, "--json"}, simArgs...)...)
		require.Equal(t, 0, code, "concurrency %s: %s", conc, stderr)
		var sum solveSummary
		require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
		assert.Equal(t, 24, sum.Tasks)
		assert.Equal(t, 24, sum.Solved)
		rs := results(t, out)
		require.Len(t, rs, 24)
		for id, r := range rs {
			assert.Equal(t, "solved", r["status"], id)
		}
		runs = append(runs, rs)
	}
	assert.Equal(t, runs[0], runs[1], "task by task, everything but wall time is the same at --concurrency 1 and 4")
	flagged := 0.0
	for _, r := range runs[0] {
		flagged += r["flagged"].(float64)
	}
	assert.Positive(t, flagged, "the votes were not all unanimous")
	assert.JSONEq(t, `{"version":"1.4.2","file":"src/version.go"}`, mustJSON(t, runs[0]["find-2"]["state"]))
	assert.JSONEq(t, `[[],[],[2,1]]`, mustJSON(t, runs[0]["hanoi-1"]["state"]))
	assert.JSONEq(t, `[[],[],[3,2,1]]`, mustJSON(t, runs[0]["hanoi-4"]["state"]))
	assert.JSONEq(t, `[[],[],[5,4,3,2,1]]`, mustJSON(t, runs[0]["hanoi-13"]["state"]))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestBinarySolveKilledTwiceEndsWithTheUninterruptedResults(t *testing.T) {
	t.Parallel()
	// The kill moments are random; the seed is logged, and MDAP_KILL_SEED
	// replays a failing run's moments.
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("MDAP_KILL_SEED"); v != "" {
		var err error
		seed, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "MDAP_KILL_SEED")
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("kill moments drawn with seed %d (replay: MDAP_KILL_SEED=%d)", seed, seed)
	root := t.TempDir()
	tasks := mixedTasks(t, root, 12, 4, 7, 5, 6)
	var runs []*child // every run of the killed batch, for the failure's record
	t.Cleanup(func() {
		if t.Failed() {
			dumpBatch(t, filepath.Join(root, "killed"), runs)
		}
	})
	args := func(dir string) []string {
		return append([]string{"solve", tasks, "--out", filepath.Join(dir, "results.jsonl"), "--state", filepath.Join(dir, "state"), "--concurrency", "3"}, simArgs...)
	}
	// The uninterrupted batch (latency changes no result).
	ref := start(t, nil, args(filepath.Join(root, "ref"))...) // the plain child
	require.Equal(t, 0, ref.wait(t, time.Minute), "stderr: %s", &ref.stderr)

	dir := filepath.Join(root, "killed")
	out := filepath.Join(dir, "results.jsonl")
	for kill, missed := 0, 0; kill < 2; kill++ {
		c := startRace(t, nil, append(args(dir), "--latency", "8ms")...)
		runs = append(runs, c)
		before := countLines(out)
		// A random moment once this run has recorded a result: results
		// and journals are being written.
		require.Eventually(t, func() bool { return countLines(out) > before }, 30*time.Second, time.Millisecond, "kill %d: no progress; stderr: %s", kill, &c.stderr)
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		if kill == 1 {
			// The last kill leaves a task to resume: it lands once an
			// unfinished task's journal holds a step (journals are written
			// every 256 steps or second, so without this wait a kill could
			// find only fresh journals, and nothing would be resumed).
			require.Eventually(t, func() bool { return unfinishedJournalWithSteps(filepath.Join(dir, "state"), out) }, 30*time.Second, time.Millisecond,
				"kill %d: no unfinished task journaled a step; stderr: %s", kill, &c.stderr)
		}
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
		_ = c.wait(t, 30*time.Second)
		ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ok)
		require.True(t, ws.Signaled(), "kill %d: the batch must still be running when killed (it exited %d); stderr: %s", kill, ws.ExitStatus(), &c.stderr)
		results(t, out) // whole lines, no id twice, after each kill
		if kill == 1 && !unfinishedJournalWithSteps(filepath.Join(dir, "state"), out) && missed < 5 {
			// The task finished in the moment between the look and the
			// kill (a loaded machine can pause the test that long):
			// nothing is left to resume, so kill another run.
			t.Logf("kill %d landed after its unfinished task finished; again", kill)
			kill--
			missed++
		}
	}
	c := startRace(t, nil, append(args(dir), "--json")...)
	runs = append(runs, c)
	require.Equal(t, 0, c.wait(t, time.Minute), "stderr: %s", &c.stderr)
	var sum solveSummary
	require.NoError(t, json.Unmarshal(c.stdout.Bytes(), &sum))
	assert.Positive(t, sum.Skipped, "tasks recorded before the kills are skipped")
	assert.Positive(t, sum.Resumed, "unfinished tasks resumed from their journals")
	assert.Equal(t, 12, sum.Solved)
	assert.Equal(t, results(t, filepath.Join(root, "ref", "results.jsonl")), results(t, out), "the same results as the uninterrupted batch")
}

// dumpBatch logs what a failed kill test leaves behind, before its
// temporary folder goes: each run's stderr, the results file, and every
// journal of the state folder (a failure there cannot be read afterwards).
func dumpBatch(t *testing.T, dir string, runs []*child) {
	t.Helper()
	for i, c := range runs {
		t.Logf("run %d stderr:\n%s", i+1, c.stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.jsonl"))
	t.Logf("results.jsonl (%v):\n%s", err, b)
	entries, _ := os.ReadDir(filepath.Join(dir, "state"))
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "state", e.Name()))
		t.Logf("state/%s (%d bytes, %v):\n%s", e.Name(), len(b), err, b)
	}
}

// unfinishedJournalWithSteps reports whether a journal in state holds a
// whole line past its header for a task the results file does not list.
func unfinishedJournalWithSteps(state, resultsFile string) bool {
	done := map[string]bool{}
	b, _ := os.ReadFile(resultsFile)
	for _, l := range strings.Split(string(b), "\n") {
		var r struct{ ID string }
		if json.Unmarshal([]byte(l), &r) == nil && r.ID != "" {
			done[r.ID] = true
		}
	}
	entries, _ := os.ReadDir(state)
	for _, e := range entries {
		name := e.Name()
		cut := strings.LastIndexByte(name, '-') // id, "-", a hash of it, ".jsonl"
		if cut < 0 || !strings.HasSuffix(name, ".jsonl") || done[name[:cut]] {
			continue
		}
		if countLines(filepath.Join(state, name)) >= 2 {
			return true
		}
	}
	return false
}

func TestBinarySolveSecondBatchOnTheSameFilesIsRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 8}}`+"\n"+`{"id": "b", "hanoi": {"disks": 3}}`+"\n"), 0o644))
	out, state := filepath.Join(root, "results.jsonl"), filepath.Join(root, "state")
	// At least 255 steps of 20ms: running for the whole test.
	first := start(t, nil, append([]string{"solve", tasks, "--out", out, "--state", state, "--latency", "20ms"}, simArgs...)...)
	require.Eventually(t, func() bool {
		entries, err := os.ReadDir(state)
		return err == nil && len(entries) > 1
	}, 30*time.Second, time.Millisecond)

	otherState, otherOut := filepath.Join(root, "other-state"), filepath.Join(root, "other.jsonl")
	for _, c := range []struct {
		args    []string
		flag    string
		created string
	}{
		{[]string{"--out", out, "--state", otherState}, "--out", otherState},
		{[]string{"--out", otherOut, "--state", state}, "--state", otherOut},
	} {
		second := start(t, nil, append(append([]string{"solve", tasks}, c.args...), simArgs...)...)
		assert.Equal(t, 2, second.wait(t, 10*time.Second), "refused at once")
		assert.Contains(t, second.stderr.String(), "locked by another batch run")
		assert.Contains(t, second.stderr.String(), c.flag)
		assert.Empty(t, second.stdout.String())
		assert.NoFileExists(t, c.created, "nothing touched")
		assert.NoDirExists(t, c.created, "nothing touched")
	}
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 130, first.wait(t, 30*time.Second))
	assert.Contains(t, first.stderr.String(), "run the same command again to finish")
	assert.Contains(t, first.stderr.String(), "resume from their journals in "+state)
	assert.NotContains(t, first.stderr.String(), "context canceled")
	results(t, out)

	done := start(t, nil, append([]string{"solve", tasks, "--out", out, "--state", state}, simArgs...)...)
	require.Equal(t, 0, done.wait(t, time.Minute), "stderr: %s", &done.stderr)
	assert.Len(t, results(t, out), 2)
}

func TestSolveBadLinesAreRecordedInvalidAndExit1(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 3}}
{"id": "b", "hanoi": {"disks": 3}
{"id": "c", "hanoi": {"disks": 3}, "colour": "red"}
{"id": "d", "spec": "specs/missing.json"}
{"id": "a", "hanoi": {"disks": 4}}
`+fmt.Sprintf(`{"id": "e", "spec": %q}`, specFile(t, "find-version.json"))+"\n"), 0o644))
	out := filepath.Join(dir, "r.jsonl")
	code, stdout, stderr := cli(t, "solve", tasks, "--out", out, "--progress", "off")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "2 solved, 0 failed, 4 invalid")
	assert.Contains(t, stderr, "4 of 6 tasks not solved")
	rs := results(t, out)
	require.Len(t, rs, 6)
	assert.Equal(t, "solved", rs["a"]["status"])
	assert.Equal(t, "solved", rs["e"]["status"])
	for key, want := range map[string]string{"line:2": "line 2: malformed JSON", "c": `line 3: unknown field "colour"`, "d": "line 4", "line:5": `line 5: id "a" is already used by line 1`} {
		assert.Equal(t, "invalid", rs[key]["status"], key)
		assert.Contains(t, rs[key]["error"], want, key)
	}
	assert.Contains(t, rs["d"]["error"], filepath.Join(dir, "specs", "missing.json"), "a spec path is relative to the tasks file")

	// Run again: everything is recorded, nothing runs, the verdict stands.
	before := mustRead(t, out)
	code, stdout, _ = cli(t, "solve", tasks, "--out", out, "--progress", "off")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "(6 recorded by an earlier run)")
	assert.Equal(t, before, mustRead(t, out))
}

func TestSolveDropsATornResultsLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 3}}`+"\n"+`{"id": "b", "hanoi": {"disks": 2}}`+"\n"), 0o644))
	out := filepath.Join(dir, "r.jsonl")
	code, _, _ := cli(t, "solve", tasks, "--out", out, "--progress", "off")
	require.Equal(t, 0, code)
	whole := mustRead(t, out)
	lines := strings.SplitAfter(string(whole), "\n")
	// A power loss left the second line half written.
	require.NoError(t, os.WriteFile(out, []byte(lines[0]+lines[1][:len(lines[1])/2]), 0o644))
	code, stdout, stderr := cli(t, "solve", tasks, "--out", out, "--progress", "off")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "ended with a torn line")
	assert.Contains(t, stdout, "(1 recorded by an earlier run)")
	assert.Len(t, results(t, out), 2)
}

func TestSolveUsageErrorsExit2AndWriteNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 2}}`+"\n"), 0o644))
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, []byte("\n\n"), 0o644))
	corrupt := filepath.Join(dir, "corrupt.jsonl")
	require.NoError(t, os.WriteFile(corrupt, []byte("not a result\n"), 0o644))
	out, state := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"solve", tasks}, "--out FILE is required"},
		{[]string{"solve", filepath.Join(dir, "nope.jsonl"), "--out", out}, "no such file"},
		{[]string{"solve", empty, "--out", out}, "has no tasks"},
		{[]string{"solve", tasks, "--out", out, "--concurrency", "0"}, "--concurrency 0"},
		{[]string{"solve", tasks, "--out", out, "--max-inflight", "-1"}, "--max-inflight -1"},
		{[]string{"solve", tasks, "--out", out, "--rpm", "-5"}, "--rpm -5"},
		{[]string{"solve", tasks, "--out", out, "--rpm", "NaN"}, "--rpm NaN: use a positive number of requests per minute, or 0 for no bound"},
		{[]string{"solve", tasks, "--out", out, "--rpm", "+Inf"}, "--rpm +Inf: use a positive number"},
		{[]string{"solve", tasks, "--out", out, "--max-inflight", "-2"}, "--max-inflight -2: use 1 or more, or 0 for no bound"},
		{[]string{"solve", tasks, "--out", out, "--max-steps", "-1"}, "--max-steps -1"},
		{[]string{"solve", tasks, "--out", out, "--journal", "j.jsonl"}, "--state DIR keeps one journal per task"},
		{[]string{"solve", tasks, "--out", out, "--resume"}, "--state DIR"},
		{[]string{"solve", tasks, "--out", out, "--tools", "shell"}, "--tools"},
		{[]string{"solve", tasks, "--out", out, "--root", filepath.Join(dir, "nope")}, "--root"},
		{[]string{"solve", tasks, "--out", out, "--k", "0"}, `"0" for "--k" flag`},
		{[]string{"solve", tasks, "--out", out, "--model", "gpt4"}, "--model"},
		{[]string{"solve", tasks, "--out", dir}, "not a regular file"},
		{[]string{"solve", tasks, "--out", out, "--state", tasks}, "not a folder"},
		{[]string{"solve", tasks, "--out", corrupt, "--state", state}, "results file is corrupt"},
		{[]string{"solve", tasks, tasks, "--out", out}, "accepts 1 arg"},
	} {
		code, stdout, stderr := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.Empty(t, stdout, "%v", c.args)
		assert.NoFileExists(t, out, "%v", c.args)
		assert.NoDirExists(t, state, "%v", c.args)
	}
	assert.Equal(t, "not a result\n", string(mustRead(t, corrupt)))
}

// TestSolveHelpListsOnlyWhatSolveTakes: `maker solve --help` offers no flag
// that maker solve refuses as not applying to it (the run flags it shares
// with hanoi and run are registered by one function; those solve cannot
// honour are hidden, as --journal and --resume are), and its --k does not
// offer auto. Each such flag is still refused (exit 2) with a message about
// maker solve, never advice that solve cannot follow (--resume-or-start
// used to say it "needs --journal FILE", a flag solve refuses).
func TestSolveHelpListsOnlyWhatSolveTakes(t *testing.T) {
	t.Parallel()
	code, help, _ := cli(t, "solve", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, help, "--state string")
	kLine := regexp.MustCompile(`(?m)^ +--k k +.*$`).FindString(help)
	require.NotEmpty(t, kLine, help)
	assert.NotContains(t, kLine, "auto", "maker solve refuses --k auto")
	dir := t.TempDir()
	tasks := "../../testdata/batch/tasks.jsonl"
	out := filepath.Join(dir, "out.jsonl")
	for _, c := range []struct {
		flag []string
		want string
	}{
		{[]string{"--journal", "j.jsonl"}, "--journal does not apply to maker solve"},
		{[]string{"--resume"}, "--resume does not apply to maker solve"},
		{[]string{"--resume-or-start"}, "--resume-or-start does not apply to maker solve"},
		{[]string{"--structured"}, "does not apply to maker solve"},
		{[]string{"--verbose"}, "does not apply to maker solve"},
		{[]string{"--target", "0.9"}, "applies to --k auto only"},
		{[]string{"--k-floor", "2"}, "applies to --k auto only"},
		{[]string{"--k-max", "9"}, "applies to --k auto only"},
		{[]string{"--k", "auto"}, "give maker solve a fixed --k"},
	} {
		if c.flag[0] != "--k" {
			offered := regexp.MustCompile(`(?m)^ +` + c.flag[0] + ` `).MatchString(help)
			assert.False(t, offered, "maker solve --help offers %s, which solve refuses", c.flag[0])
		}
		code, stdout, stderr := cli(t, append([]string{"solve", tasks, "--out", out, "--progress", "off"}, c.flag...)...)
		assert.Equal(t, 2, code, "%v: %s", c.flag, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.flag)
		assert.NotContains(t, stderr, "needs --journal", "%v: advice maker solve cannot follow", c.flag)
		assert.Empty(t, stdout, "%v", c.flag)
	}
	assert.NoFileExists(t, out)
}

// TestSolveMaxInFlightThroughTheOpenAIClient runs a batch against an
// OpenAI-compatible stub on loopback and counts the requests in flight
// at the server.
func TestSolveMaxInFlightThroughTheOpenAIClient(t *testing.T) {
	t.Parallel()
	var now, peak, total atomic.Int64
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := now.Add(1)
		defer now.Add(-1)
		total.Add(1)
		mu.Lock()
		peak.Store(max(peak.Load(), n))
		mu.Unlock()
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var parts []string
		for _, m := range req.Messages {
			parts = append(parts, m.Content)
		}
		reply, err := hanoi.Oracle{}.Correct(sim.Query{Prompt: strings.Join(parts, "\n\n")})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(time.Millisecond) // so that requests overlap
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "tiny",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5}})
	}))
	defer srv.Close()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 3}}
{"id": "b", "hanoi": {"disks": 3}}
{"id": "c", "hanoi": {"disks": 3}}
{"id": "d", "hanoi": {"disks": 3}}
`), 0o644))
	code, stdout, stderr := cli(t, "solve", tasks, "--out", filepath.Join(dir, "r.jsonl"), "--model", "openai:tiny", "--base-url", srv.URL,
		"--concurrency", "4", "--max-inflight", "2", "--rpm", "60000", "--json", "--progress", "off")
	require.Equal(t, 0, code, stderr)
	var sum solveSummary
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	assert.Equal(t, 4, sum.Solved)
	assert.Equal(t, int64(4*7*3), total.Load(), "k samples for each of 7 steps of 4 tasks")
	assert.LessOrEqual(t, peak.Load(), int64(2), "4 tasks at k = 3 want 12 requests at once; --max-inflight 2 allows 2")
	require.NotNil(t, sum.Limits)
	assert.Equal(t, int64(84), sum.Limits.Calls)
}

func TestSolveProgressOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "a", "hanoi": {"disks": 4}}`+"\n"+`{"id": "b", "hanoi": {"disks": 3}}`+"\n"), 0o644))
	// stderr is not a terminal here: auto shows nothing but the summary.
	code, stdout, stderr := cli(t, "solve", tasks, "--out", filepath.Join(dir, "a.jsonl"))
	require.Equal(t, 0, code)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "2 solved, 0 failed, 0 invalid")
	code, _, stderr = cli(t, "solve", tasks, "--out", filepath.Join(dir, "b.jsonl"), "--progress", "on")
	require.Equal(t, 0, code)
	assert.Contains(t, stderr, "tasks (steps ", "the bar shows steps, samples, rate and dollars")
	assert.Contains(t, stderr, "$0.0000")
}

// TestSolveTheREADMEExample runs the tasks file the README's example
// names, as written, from the module's root.
func TestSolveTheREADMEExample(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "results.jsonl")
	t.Chdir("../..")
	code, stdout, stderr := cli(t, "solve", "testdata/batch/tasks.jsonl", "--out", out, "--state", filepath.Join(dir, "state"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "5 tasks: 5 solved, 0 failed, 0 invalid")
	rs := results(t, out)
	assert.JSONEq(t, `{"version":"1.4.2","file":"src/version.go"}`, mustJSON(t, rs["find-version"]["state"]))
	assert.JSONEq(t, `{"wrote":false}`, mustJSON(t, rs["write-denied"]["state"]))
	assert.NoFileExists(t, "testdata/spec/note.txt", "read-only by default")
	assert.EqualValues(t, 255, rs["hanoi-8-k4"]["steps"])
	assert.EqualValues(t, 4, rs["hanoi-8-k4"]["k"])
}
