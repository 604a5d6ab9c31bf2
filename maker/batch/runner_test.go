package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// simConfig is a simulated model that makes mistakes and red flags, so
// that votes disagree and budgets are spent, yet solves every task below
// at k = 3 (checked by the tests).
func simConfig() sim.Config {
	c := sim.DefaultConfig()
	c.P, c.FlagRate = 0.97, 0.03
	return c
}

// simBuiltin is the built-in builder over the simulated model.
func simBuiltin(wrap func(llms.Model) llms.Model) *Builtin {
	return &Builtin{Seed: 1, Model: func(_ Job, o sim.Oracle, seed uint64) (llms.Model, error) {
		c := simConfig()
		c.Seed = seed
		m, err := sim.New(o, c)
		if err != nil || wrap == nil {
			return m, err
		}
		return wrap(m), nil
	}}
}

func specPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../../testdata/spec", name))
	require.NoError(t, err)
	return p
}

// mixedTasks writes n tasks of mixed kinds: Towers of Hanoi of 2 to 7
// disks and the two spec tasks, with their own seeds and margins.
func mixedTasks(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	empty := t.TempDir()
	for i := range n {
		switch i % 4 {
		case 0, 1:
			fmt.Fprintf(&b, `{"id": "hanoi-%d", "hanoi": {"disks": %d}, "seed": %d}`+"\n", i, 2+i%6, i)
		case 2:
			fmt.Fprintf(&b, `{"id": "find-%d", "spec": %q, "seed": %d, "k": %d}`+"\n", i, specPath(t, "find-version.json"), i, 2+i%3)
		case 3:
			fmt.Fprintf(&b, `{"id": "write-%d", "spec": %q, "root": %q, "seed": %d}`+"\n", i, specPath(t, "write-denied.json"), empty, i)
		}
	}
	return b.String()
}

func writeTasks(t *testing.T, dir, text string) []Job {
	t.Helper()
	p := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	jobs, err := ReadJobsFile(p)
	require.NoError(t, err)
	return jobs
}

// comparable is a result without its wall time.
func comparable(rs []Result) map[string]Result {
	out := map[string]Result{}
	for _, r := range rs {
		r.WallSeconds = 0
		out[r.Key()] = r
	}
	return out
}

// solveInto runs jobs with a store in dir.
func solveInto(t *testing.T, ctx context.Context, dir string, jobs []Job, r Runner) (Summary, error) {
	t.Helper()
	st, err := OpenStore(filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "state"))
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	r.Store = st
	return r.Run(ctx, jobs)
}

func recorded(t *testing.T, dir string) []Result {
	t.Helper()
	b := mustRead(t, filepath.Join(dir, "results.jsonl"))
	require.True(t, len(b) == 0 || b[len(b)-1] == '\n', "the file ends with a whole line")
	var out []Result
	ids := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		var r Result
		require.NoError(t, json.Unmarshal([]byte(l), &r), "every line is a whole result: %q", l)
		require.False(t, ids[r.Key()], "no job twice: %s", r.Key())
		ids[r.Key()] = true
		out = append(out, r)
	}
	return out
}

func TestRunnerMixedBatchSameResultsAtAnyConcurrency(t *testing.T) {
	root := t.TempDir()
	text := mixedTasks(t, 24)
	var runs []map[string]Result
	for _, conc := range []int{1, 4} {
		dir := filepath.Join(root, fmt.Sprint(conc))
		require.NoError(t, os.Mkdir(dir, 0o755))
		jobs := writeTasks(t, dir, text)
		sum, err := solveInto(t, context.Background(), dir, jobs, Runner{Build: simBuiltin(nil).Build, Concurrency: conc})
		require.NoError(t, err)
		assert.Equal(t, 24, sum.Solved, "concurrency %d: every task solved: %+v", conc, sum)
		assert.True(t, sum.OK())
		rs := recorded(t, dir)
		require.Len(t, rs, 24)
		for _, r := range rs {
			assert.Equal(t, StatusSolved, r.Status, "%s: %s", r.ID, r.Error)
			assert.NotEmpty(t, r.Journal)
			assert.FileExists(t, filepath.Join(dir, r.Journal))
			assert.NotEmpty(t, r.State)
			switch r.Kind {
			case "spec":
				if strings.HasPrefix(r.ID, "find") {
					assert.JSONEq(t, `{"version":"1.4.2","file":"src/version.go"}`, string(r.State))
					assert.Equal(t, 2, r.ToolCalls)
				} else {
					assert.JSONEq(t, `{"wrote":false}`, string(r.State))
					assert.Equal(t, 1, r.Denied)
				}
			case "hanoi":
				disks := 2 + (r.Line-1)%6
				assert.Equal(t, 1<<disks-1, r.Steps, r.ID)
				assert.Equal(t, hanoi.Goal(disks).String(), string(mustCompactJSON(t, r.State)), r.ID)
			}
		}
		runs = append(runs, comparable(rs))
	}
	assert.Equal(t, runs[0], runs[1], "task by task, the same results at concurrency 1 and 4")
	// Not vacuous: the runs voted through mistakes and red flags.
	flagged, extra := 0, 0
	for _, r := range runs[0] {
		flagged += r.Flagged
		extra += r.Samples - r.Steps*r.K
	}
	assert.Positive(t, flagged)
	assert.Positive(t, extra, "some steps needed more than k samples")
}

func TestRunnerInterruptedBatchResumesToTheSameResults(t *testing.T) {
	root := t.TempDir()
	text := mixedTasks(t, 12)
	whole := filepath.Join(root, "whole")
	require.NoError(t, os.Mkdir(whole, 0o755))
	_, err := solveInto(t, context.Background(), whole, writeTasks(t, whole, text), Runner{Build: simBuiltin(nil).Build, Concurrency: 3})
	require.NoError(t, err)

	dir := filepath.Join(root, "cut")
	require.NoError(t, os.Mkdir(dir, 0o755))
	jobs := writeTasks(t, dir, text)
	var calls, now, peak atomic.Int64
	counted := simBuiltin(func(m llms.Model) llms.Model {
		return &inflight{Model: m, now: &now, peak: &peak, calls: &calls}
	})
	for _, at := range []int{40, 150} { // interrupted twice, at so many steps
		ctx, cancel := context.WithCancel(context.Background())
		var inside atomic.Bool
		sum, err := solveInto(t, ctx, dir, jobs, Runner{Build: counted.Build, Concurrency: 3, Progress: func(p Progress) {
			if !inside.CompareAndSwap(false, true) {
				t.Error("Progress called while a call was in progress")
			}
			defer inside.Store(false)
			if p.Steps >= at {
				cancel()
			}
		}})
		cancel()
		require.ErrorIs(t, err, context.Canceled)
		n := calls.Load()
		time.Sleep(30 * time.Millisecond)
		assert.Equal(t, n, calls.Load(), "no call after Run returned: every goroutine had ended")
		assert.Positive(t, sum.Unfinished, "interrupted at %d steps", at)
		assert.Equal(t, len(recorded(t, dir)), sum.Solved+sum.Failed+sum.Invalid)
	}
	before := len(recorded(t, dir))
	sum, err := solveInto(t, context.Background(), dir, jobs, Runner{Build: simBuiltin(nil).Build, Concurrency: 3})
	require.NoError(t, err)
	assert.Equal(t, before, sum.Skipped, "recorded tasks are skipped")
	assert.Positive(t, sum.Resumed, "the interrupted tasks resumed from their journals")
	assert.Equal(t, 12, sum.Solved)
	assert.Equal(t, comparable(recorded(t, whole)), comparable(recorded(t, dir)), "the same results as an uninterrupted batch")
}

func TestRunnerBadLinesAreInvalidTheOthersSolve(t *testing.T) {
	dir := t.TempDir()
	good := `{"id": "h3", "hanoi": {"disks": 3}}` + "\n" +
		fmt.Sprintf(`{"id": "find", "spec": %q}`, specPath(t, "find-version.json")) + "\n"
	bad := []struct{ line, want string }{
		{`{"id": "m", "hanoi": {"disks": 3}`, "malformed JSON"},
		{`{"id": "u", "hanoi": {"disks": 3}, "colour": "red"}`, `unknown field "colour"`},
		{`{"id": "missing", "spec": "no/such/spec.json"}`, "no such file"},
		{`{"id": "h3", "hanoi": {"disks": 4}}`, `id "h3" is already used by line 1`},
		{`{"id": "custom", "task": {"x": 1}}`, `needs a library Builder`},
		{`{"id": "budget", "hanoi": {"disks": 3}, "k": 4, "max_samples": 3}`, "max_samples 3 is below k 4"},
		{fmt.Sprintf(`{"id": "tools", "spec": %q, "tools": "shell"}`, specPath(t, "find-version.json")), `tools "shell"`},
		{fmt.Sprintf(`{"id": "root", "spec": %q, "root": "no/such/dir"}`, specPath(t, "find-version.json")), "root"},
	}
	text := good
	for _, b := range bad {
		text += b.line + "\n"
	}
	text += `{"id": "h4", "hanoi": {"disks": 4}}` + "\n"
	jobs := writeTasks(t, dir, text)
	sum, err := solveInto(t, context.Background(), dir, jobs, Runner{Build: simBuiltin(nil).Build, Concurrency: 2})
	require.NoError(t, err, "bad lines do not fail the batch")
	assert.Equal(t, 3, sum.Solved)
	assert.Equal(t, len(bad), sum.Invalid)
	assert.False(t, sum.OK())
	byLine := map[int]Result{}
	for _, r := range recorded(t, dir) {
		byLine[r.Line] = r
	}
	for i, b := range bad {
		line := 3 + i
		r, ok := byLine[line]
		require.True(t, ok, "line %d has a result", line)
		assert.Equal(t, StatusInvalid, r.Status, "line %d", line)
		assert.Contains(t, r.Error, fmt.Sprintf("line %d", line), "the error names the line")
		assert.Contains(t, r.Error, b.want, "line %d", line)
		assert.Zero(t, r.Steps)
	}
	assert.Empty(t, byLine[6].ID, "the duplicate does not take the id")

	// The good tasks' results are those of a batch without the bad lines.
	clean := t.TempDir()
	_, err = solveInto(t, context.Background(), clean, writeTasks(t, clean, good+"\n"+`{"id": "h4", "hanoi": {"disks": 4}}`+"\n"), Runner{Build: simBuiltin(nil).Build})
	require.NoError(t, err)
	want := comparable(recorded(t, clean))
	got := comparable(recorded(t, dir))
	for k, r := range want {
		g := got[k]
		g.Line, r.Line = 0, 0
		assert.Equal(t, r, g, k)
	}
}

func TestRunnerPanicsFailTheirJobOnly(t *testing.T) {
	b := simBuiltin(nil)
	build := func(ctx context.Context, job Job) (*Unit, error) {
		switch job.ID {
		case "build":
			panic("boom in build")
		case "finish":
			u, err := b.Build(ctx, job)
			u.Finish = func(*Result) { panic("boom in finish") }
			return u, err
		case "close":
			u, err := b.Build(ctx, job)
			u.Close = func() error { panic("boom in close") }
			return u, err
		}
		return b.Build(ctx, job)
	}
	jobs := readJobs(t, `{"id": "build", "hanoi": {"disks": 2}}
{"id": "finish", "hanoi": {"disks": 2}}
{"id": "close", "hanoi": {"disks": 2}}
{"id": "fine", "hanoi": {"disks": 3}}`)
	sum, err := (&Runner{Build: build, Concurrency: 4}).Run(context.Background(), jobs)
	require.NoError(t, err)
	got := map[string]Result{}
	for _, r := range sum.Results {
		got[r.ID] = r
	}
	assert.Equal(t, StatusFailed, got["build"].Status)
	assert.Contains(t, got["build"].Error, "boom in build")
	assert.Equal(t, StatusFailed, got["finish"].Status)
	assert.Contains(t, got["finish"].Error, "boom in finish")
	assert.Equal(t, StatusSolved, got["close"].Status, "a panic closing a finished job is only logged")
	assert.Equal(t, StatusSolved, got["fine"].Status)
}

type failingWriter struct {
	mu    sync.Mutex
	calls int
	after int
}

func (w *failingWriter) Write(Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	if w.calls > w.after {
		return errors.New("disk full")
	}
	return nil
}

func TestRunnerStopsAtTheFirstResultItCannotRecord(t *testing.T) {
	w := &failingWriter{after: 1}
	var text strings.Builder
	for i := range 10 {
		fmt.Fprintf(&text, `{"id": "h%d", "hanoi": {"disks": 5}}`+"\n", i)
	}
	sum, err := (&Runner{Build: simBuiltin(nil).Build, Concurrency: 3, Results: w}).Run(context.Background(), readJobs(t, text.String()))
	require.ErrorIs(t, err, ErrWrite)
	assert.ErrorContains(t, err, "disk full")
	assert.Positive(t, sum.Unfinished, "the batch stopped")
	assert.LessOrEqual(t, w.calls, 1+3, "no result is written after the failure but those already finishing")
}

// inflight wraps a model and counts its calls in flight.
type inflight struct {
	llms.Model
	now, peak *atomic.Int64
	calls     *atomic.Int64 // optional
}

func (m *inflight) GenerateContent(ctx context.Context, msgs []llms.MessageContent, o ...llms.CallOption) (*llms.ContentResponse, error) {
	if m.calls != nil {
		m.calls.Add(1)
	}
	n := m.now.Add(1)
	defer m.now.Add(-1)
	for {
		p := m.peak.Load()
		if n <= p || m.peak.CompareAndSwap(p, n) {
			break
		}
	}
	return m.Model.GenerateContent(ctx, msgs, o...)
}

func (m *inflight) Identity() string { return maker.ModelIdentity(m.Model) }

func TestRunnerSharesTheInFlightLimitAcrossTasks(t *testing.T) {
	var now, peak atomic.Int64
	b := &Builtin{Model: func(_ Job, o sim.Oracle, seed uint64) (llms.Model, error) {
		c := simConfig()
		c.Seed = seed
		c.Latency = sim.FixedLatency(500 * time.Microsecond) // so that calls overlap
		m, err := sim.New(o, c)
		return &inflight{Model: m, now: &now, peak: &peak}, err
	}}
	var text strings.Builder
	for i := range 8 {
		fmt.Fprintf(&text, `{"id": "h%d", "hanoi": {"disks": 4}}`+"\n", i)
	}
	jobs := readJobs(t, text.String())
	l, err := NewLimits(LimitConfig{MaxInFlight: 2})
	require.NoError(t, err)
	sum, err := (&Runner{Build: b.Build, Concurrency: 8, Limits: l}).Run(context.Background(), jobs)
	require.NoError(t, err)
	assert.Equal(t, 8, sum.Solved)
	assert.LessOrEqual(t, peak.Load(), int64(2), "8 tasks at k = 3 want 24 calls at once; the model never sees more than 2")
	assert.Equal(t, int64(2), peak.Load(), "the limit was reached")
	require.NotNil(t, sum.Limits)
	assert.LessOrEqual(t, sum.Limits.PeakInFlight, int64(2))

	// Without limits the same batch overlaps far more.
	peak.Store(0)
	_, err = (&Runner{Build: b.Build, Concurrency: 8}).Run(context.Background(), jobs)
	require.NoError(t, err)
	assert.Greater(t, peak.Load(), int64(2))
}

func TestRunnerHanoiWrongStateIsAFailure(t *testing.T) {
	// k = 1 with a poor model: the first valid vote wins, wrong moves are
	// applied, and the task ends (or stops) in a wrong state.
	b := &Builtin{Seed: 3, Model: func(_ Job, o sim.Oracle, seed uint64) (llms.Model, error) {
		c := sim.DefaultConfig()
		c.Seed, c.P = seed, 0.6
		return sim.New(o, c)
	}}
	jobs := readJobs(t, `{"id": "h", "hanoi": {"disks": 5}, "k": 1, "max_steps": 31}`)
	sum, err := (&Runner{Build: b.Build}).Run(context.Background(), jobs)
	require.NoError(t, err)
	r := sum.Results[0]
	assert.Equal(t, StatusFailed, r.Status)
	assert.NotEmpty(t, r.Error)
	var st hanoi.State
	require.NoError(t, json.Unmarshal(r.State, &st))
}

func TestRunnerJournalOfAnotherLineIsInvalid(t *testing.T) {
	dir := t.TempDir()
	_, err := solveInto(t, context.Background(), dir, writeTasks(t, dir, `{"id": "h", "hanoi": {"disks": 3}}`+"\n"), Runner{Build: simBuiltin(nil).Build})
	require.NoError(t, err)
	// The result line goes (as if the batch was killed before writing it)
	// and the task's line changes: its journal no longer fits.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "results.jsonl"), nil, 0o644))
	sum, err := solveInto(t, context.Background(), dir, writeTasks(t, dir, `{"id": "h", "hanoi": {"disks": 3}, "k": 5}`+"\n"), Runner{Build: simBuiltin(nil).Build})
	require.NoError(t, err)
	r := sum.Results[0]
	assert.Equal(t, StatusInvalid, r.Status)
	assert.Contains(t, r.Error, "line 1")
	assert.Contains(t, r.Error, "k: 3 in the journal, 5 now")
	assert.Contains(t, r.Error, "remove "+r.Journal)
}

func TestRunnerErrors(t *testing.T) {
	_, err := (&Runner{}).Run(context.Background(), nil)
	assert.ErrorIs(t, err, ErrConfig)
	_, err = (&Runner{Build: simBuiltin(nil).Build, Concurrency: -1}).Run(context.Background(), nil)
	assert.ErrorIs(t, err, ErrConfig)
	sum, err := (&Runner{Build: simBuiltin(nil).Build}).Run(context.Background(), nil)
	require.NoError(t, err)
	assert.True(t, sum.OK(), "an empty batch has nothing unsolved")
}

// mustCompactJSON writes JSON as hanoi.State.String does: ", " between
// elements.
func mustCompactJSON(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var v [][]int
	require.NoError(t, json.Unmarshal(raw, &v))
	var st hanoi.State
	for i := range 3 {
		st[i] = v[i]
	}
	return []byte(st.String())
}

func TestRunnerNeverBuildsAnInvalidLine(t *testing.T) {
	jobs := readJobs(t, `{"id": "a", "hanoi": {"disks": 2}}
{"id": "b", "hanoi": {"disks": 2}, "oops": 1}
not json
{"id": "a", "hanoi": {"disks": 2}}`)
	var built []string
	var mu sync.Mutex
	b := simBuiltin(nil)
	sum, err := (&Runner{Concurrency: 2, Build: func(ctx context.Context, j Job) (*Unit, error) {
		mu.Lock()
		built = append(built, j.Key())
		mu.Unlock()
		return b.Build(ctx, j)
	}}).Run(context.Background(), jobs)
	require.NoError(t, err)
	assert.Equal(t, []string{"id:a"}, built, "only the valid line is built")
	assert.Equal(t, 1, sum.Solved)
	assert.Equal(t, 3, sum.Invalid)
}

// TestRunnerLeavesTheBuiltSolverAlone: the runner runs a copy of the
// Solver a Builder returns, with the job's journal, the limited model and
// its own progress hook on the copy; the Solver it was given keeps its
// fields (a Builder may share one Solver's settings between jobs), and
// the Progress the Builder set is still called.
func TestRunnerLeavesTheBuiltSolverAlone(t *testing.T) {
	b := simBuiltin(nil)
	type built struct {
		s     *maker.Solver
		model llms.Model
	}
	var (
		mu    sync.Mutex
		all   []built
		calls atomic.Int64
	)
	build := func(ctx context.Context, job Job) (*Unit, error) {
		u, err := b.Build(ctx, job)
		if u != nil {
			u.Solver.Progress = func(maker.Event) { calls.Add(1) }
			mu.Lock()
			all = append(all, built{u.Solver, u.Solver.Model})
			mu.Unlock()
		}
		return u, err
	}
	l, err := NewLimits(LimitConfig{MaxInFlight: 2})
	require.NoError(t, err)
	dir := t.TempDir()
	journal := func(job Job) (*journal.Journal, error) {
		return journalfile.Create(filepath.Join(dir, job.ID+".jsonl"), journal.Unsigned())
	}
	jobs := readJobs(t, `{"id": "a", "hanoi": {"disks": 3}}
{"id": "b", "hanoi": {"disks": 3}}`)
	sum, err := (&Runner{Build: build, Concurrency: 2, Limits: l, Journal: journal}).Run(context.Background(), jobs)
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Solved)
	require.Len(t, all, 2)
	for _, x := range all {
		assert.Nil(t, x.s.Journal, "the job's journal is the copy's")
		assert.Equal(t, x.model, x.s.Model, "the limited model is the copy's")
	}
	assert.Equal(t, int64(2*7), calls.Load(), "the Builder's Progress is called for every step of both jobs")
}
