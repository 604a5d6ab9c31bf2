package benchmarks

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFloorDecidesAsTheSolver: the floor program solves Hanoi on the sim
// with no wrong step, drawing what the solver draws (the same samples,
// give or take a malformed reply the floor lets vote).
func TestFloorDecidesAsTheSolver(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed = 5
	r, err := Floor(context.Background(), 7, 3, cfg)
	require.NoError(t, err)
	assert.True(t, r.Solved)
	assert.Equal(t, 127, r.Steps)
	assert.Zero(t, r.WrongSteps)
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	task, _ := hanoi.New(7)
	rep, err := (&maker.Solver{Model: m, Vote: vote.Config{K: 3}}).Solve(context.Background(), task)
	require.NoError(t, err)
	assert.InEpsilon(t, rep.Launched, r.Samples, 0.02, "solver %d samples, floor %d", rep.Launched, r.Samples)
}

// TestReferenceLoopOverServeSim: the paper's loop solves Hanoi over a
// serve-sim child process, drawing about what the solver draws over it.
func TestReferenceLoopOverServeSim(t *testing.T) {
	srv, err := startSimServer(context.Background(), sim.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.stop()) }()
	r, err := ReferenceLoop(context.Background(), http.DefaultTransport.(*http.Transport).Clone(), srv.url+"/v1", srv.model, 4, 3)
	require.NoError(t, err)
	assert.True(t, r.Solved)
	assert.Equal(t, 15, r.Steps)
	assert.GreaterOrEqual(t, r.Samples, 3*15)
}

// TestOverheadSuite runs the suite small: every row, the ratios against
// the right baselines, the same samples run after run, and the report's
// table; with python3 on PATH, the paper's loop in Python and the HTTP
// rows against it, after the others.
func TestOverheadSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a serve-sim child and runs every row twice")
	}
	res, err := runSpeedSized(context.Background(), Options{Seed: 3}, 5, 3, 2, func() {})
	require.NoError(t, err)
	for _, r := range res.Rows {
		assert.Positive(t, r.CPUPerSample, r.Variant)
		assert.Positive(t, r.Samples, r.Variant)
		if r.Baseline != "" {
			assert.Positive(t, r.Ratio, r.Variant)
			assert.LessOrEqual(t, r.RatioLo, r.Ratio, r.Variant)
			assert.GreaterOrEqual(t, r.RatioHi, r.Ratio, r.Variant)
		}
	}
	assert.Equal(t, res.Rows[0].Variant, res.Rows[1].Baseline, "in process against the floor")
	assert.Equal(t, referenceRow, res.Rows[4].Variant)
	assert.Equal(t, res.Rows[4].Variant, res.Rows[5].Baseline, "HTTP against the reference loop")
	assert.Equal(t, httpWavesRow, res.Rows[7].Variant)
	assert.Equal(t, res.Rows[4].Variant, res.Rows[7].Baseline, "waves + samples per request against the reference loop")
	for i, name := range map[int]string{8: httpFloorOneRow, 9: httpFloorWavesRow} {
		assert.Equal(t, name, res.Rows[i].Variant)
		assert.Equal(t, res.Rows[4].Variant, res.Rows[i].Baseline, "%s against the reference loop", name)
		assert.Equal(t, res.Rows[4].Samples, res.Rows[i].Samples, "%s: the reference loop's samples", name)
	}
	md := (&Report{Overhead: res}).Markdown()
	assert.True(t, strings.Contains(md, "## Overhead: the step loop against its floor"), md)
	assert.Contains(t, md, "| in process, --parallel k | floor")
	if _, err := exec.LookPath("python3"); err != nil {
		assert.Equal(t, errNoPython.Error(), res.PythonNotRun)
		require.Len(t, res.Rows, 10)
		return
	}
	require.Len(t, res.Rows, 15)
	assert.Empty(t, res.PythonNotRun)
	assert.NotEmpty(t, res.Python, "its version")
	py := res.Rows[10]
	assert.Equal(t, pythonRow, py.Variant)
	assert.Empty(t, py.Baseline, "a baseline")
	assert.Equal(t, res.Rows[4].Samples, py.Samples, "the Go reference's samples")
	for i, against := range map[int]int{11: 4, 12: 5, 13: 6, 14: 7} {
		r, same := res.Rows[i], res.Rows[against]
		assert.Equal(t, pythonRow, r.Baseline, r.Variant)
		assert.Equal(t, same.Variant, r.Variant, "the same runs against the other baseline")
		assert.Equal(t, same.CPUPerSample, r.CPUPerSample, r.Variant)
		assert.Equal(t, same.Samples, r.Samples, r.Variant)
		// Ratios of the same runs: the medians' ratio lies within the
		// run-by-run ratios' range (a_i <= h b_i for every run gives
		// median(a) <= h median(b)).
		q := same.CPUPerSample / py.CPUPerSample
		assert.True(t, r.RatioLo*(1-1e-9) <= q && q <= r.RatioHi*(1+1e-9), "%s: %g outside %g–%g", r.Variant, q, r.RatioLo, r.RatioHi)
	}
	assert.Contains(t, md, "| "+httpOneRow+" | "+pythonRow+" |")
	assert.Contains(t, md, "run by Python "+res.Python)
}

// TestOverheadSuiteWithoutPython: with no python3 on PATH the suite runs
// without the Python rows, and the report says so in one line; the
// informational goals are "not run", saying why, and the goals against the
// Go reference are measured as ever.
func TestOverheadSuiteWithoutPython(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a serve-sim child and runs Hanoi solves")
	}
	t.Setenv("PATH", t.TempDir())
	res, err := runSpeedSized(context.Background(), Options{Seed: 3}, 3, 2, 1, func() {})
	require.NoError(t, err)
	assert.Equal(t, errNoPython.Error(), res.PythonNotRun)
	assert.Empty(t, res.Python)
	require.Len(t, res.Rows, 10)
	for _, r := range res.Rows {
		assert.NotEqual(t, pythonRow, r.Variant)
		assert.NotEqual(t, pythonRow, r.Baseline)
	}
	md := (&Report{Overhead: res}).Markdown()
	line := "The paper's loop in Python (`benchmarks/paperloop.py`, the baseline of issue #24's own figures) was not run: python3 is not on PATH.\n"
	assert.Equal(t, 1, strings.Count(md, line), md)
	assert.NotContains(t, md, "run by Python")
	goals := overheadGoals(res)
	informational := 0
	for _, g := range goals {
		if strings.HasPrefix(g.Goal, pythonGoalPrefix) {
			informational++
			assert.Equal(t, "not run", g.Met, g.Goal)
			assert.Equal(t, "python3 is not on PATH", g.Why, g.Goal)
			assert.Empty(t, g.Measured, g.Goal)
		} else {
			assert.NotEqual(t, "not run", g.Met, g.Goal)
		}
	}
	assert.Equal(t, 2, informational)
}

// TestOverheadSuiteRefusesAPythonLoopOfOtherSamples: a paper's loop in
// Python that draws other samples than the Go reference (here one that
// calls a step with a lead of k - 1) fails the suite instead of being
// compared with it.
func TestOverheadSuiteRefusesAPythonLoopOfOtherSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a serve-sim child and runs Hanoi solves")
	}
	needPython(t)
	const right, wrong = `>= k + best_other`, `>= k - 1 + best_other`
	require.Contains(t, string(paperLoopPy), right)
	saved := paperLoopPy
	t.Cleanup(func() { paperLoopPy = saved })
	paperLoopPy = []byte(strings.Replace(string(saved), right, wrong, 1))
	_, err := runSpeedSized(context.Background(), Options{Seed: 3}, 3, 3, 1, func() {})
	require.ErrorContains(t, err, "they do not send the same requests")
}

// TestInterleavedJournal: the two solves of the journal's measurement take
// turns to the end (255 steps: three hand-offs each way), draw the same
// samples, and each is charged CPU and wall time; the journal's file is
// gone after it.
func TestInterleavedJournal(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed = 2
	dir := t.TempDir()
	p, err := interleavedJournal(context.Background(), 8, 3, cfg, dir)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, p.samples, 3*255)
	for i := range 2 {
		assert.Positive(t, p.cpu[i], i)
		assert.Positive(t, p.wall[i], i)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = interleavedJournal(ctx, 8, 3, cfg, dir)
	assert.ErrorIs(t, err, context.Canceled, "a cancelled run ends, without a deadlock")
}

// TestHTTPFloorSendsTheReferenceLoopsRequests: the floor records the
// reference loop's requests and sends them again, one per sample, or a
// step's in two requests (the first sample's, and the others' with n),
// and the server answers every one; a server that refuses them fails it.
func TestHTTPFloorSendsTheReferenceLoopsRequests(t *testing.T) {
	srv, err := startSimServer(context.Background(), sim.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.stop()) }()
	f, err := recordFloor(context.Background(), srv.url+"/v1", srv.model, 4, 3)
	require.NoError(t, err)
	require.Len(t, f.one, f.samples, "one request per sample")
	require.Len(t, f.waves, 15, "a step of 4-disk Hanoi each")
	carried := 0
	for i, step := range f.waves {
		require.Len(t, step, 2, "step %d: the first sample, then the others", i)
		var first, rest struct {
			Temperature float64 `json:"temperature"`
			Seed, N     int
		}
		require.NoError(t, json.Unmarshal(step[0], &first))
		require.NoError(t, json.Unmarshal(step[1], &rest))
		assert.Equal(t, 1, first.Seed, "step %d", i)
		assert.Zero(t, first.Temperature, "step %d", i)
		assert.Equal(t, 2, rest.Seed, "step %d", i)
		assert.Equal(t, 0.1, rest.Temperature, "step %d", i)
		assert.GreaterOrEqual(t, rest.N, 2, "step %d: k = 3 takes three samples at least", i)
		carried += 1 + rest.N
	}
	assert.Equal(t, f.samples, carried, "the waves carry every sample")
	for name, run := range map[string]func(context.Context) (int, error){"one": f.runOne, "waves": f.runWaves} {
		n, err := run(context.Background())
		require.NoError(t, err, name)
		assert.Equal(t, f.samples, n, name)
	}

	// What the runs send: every request, each sample once.
	var (
		mu       sync.Mutex
		requests int
		samples  int
		status   = http.StatusOK
	)
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ N int }
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		defer mu.Unlock()
		requests++
		samples += max(1, body.N)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"choices":[]}`))
	}))
	defer stub.Close()
	f.url = stub.URL
	for name, c := range map[string]struct {
		run      func(context.Context) (int, error)
		requests int
	}{"one": {f.runOne, f.samples}, "waves": {f.runWaves, 2 * len(f.waves)}} {
		requests, samples = 0, 0
		_, err := c.run(context.Background())
		require.NoError(t, err, name)
		assert.Equal(t, c.requests, requests, name)
		assert.Equal(t, f.samples, samples, name)
	}
	status = http.StatusBadRequest
	for name, run := range map[string]func(context.Context) (int, error){"one": f.runOne, "waves": f.runWaves} {
		_, err := run(context.Background())
		assert.ErrorIs(t, err, errFloorRequest, name)
	}
}
