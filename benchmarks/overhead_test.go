package benchmarks

import (
	"context"
	"net/http"
	"os"
	"strings"
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
	require.Len(t, res.Rows, 8)
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
