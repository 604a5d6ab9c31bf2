package benchmarks

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
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
// table.
func TestOverheadSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a serve-sim child and runs 16 Hanoi solves")
	}
	res, err := runSpeedSized(context.Background(), Options{Seed: 3}, 5, 3, 2, func() {})
	require.NoError(t, err)
	require.Len(t, res.Rows, 10)
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
