package benchmarks

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStats(t *testing.T) {
	var a accum
	for _, x := range []float64{1, 2, 3, 4} {
		a.add(x)
	}
	m := a.result()
	assert.Equal(t, 4, m.N)
	assert.InDelta(t, 2.5, m.Mean, 1e-12)
	assert.InDelta(t, math.Sqrt(5.0/3), m.SD, 1e-12)
	assert.InDelta(t, 2.5+z95*m.SD/2, m.Hi, 1e-12)
	assert.Zero(t, Mean{N: 3, Mean: 1}.Z(1), "every draw equal to theory")

	r := newRate(0, 1000)
	assert.Zero(t, r.Lo)
	assert.InDelta(t, 0.00383, r.Hi, 1e-4, "Wilson's upper bound for 0 of 1000")
	r = newRate(50, 100)
	assert.True(t, r.Contains(0.5))
	assert.InDelta(t, 0.404, r.Lo, 1e-3)
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
}

// TestFidelityRaceMatchesTheory: the vote over the sim matches the exact
// gambler's-ruin laws within sampling error, with one rival and with
// eight.
//
// 1,000 steps a case (was 3,000): at p 0.7 and k 3 the wrong-winner rate
// with one rival is 1/(1+(7/3)^3), about 7%, so some 70 wrong winners a
// case; the fidelity suite of `maker bench` (every p and k, 20,000 steps a
// cell in a full run) is the measurement.
func TestFidelityRaceMatchesTheory(t *testing.T) {
	t.Parallel()
	for _, rivals := range []int{1, 8} {
		c, err := fidelityRace(context.Background(), 5, 1000, rivals, 0.7, 3)
		require.NoError(t, err)
		assert.Less(t, math.Abs(c.Z), 4.0, "%+v", c)
		assert.True(t, c.Wrong.Contains(c.WrongTheory), "%+v", c)
		assert.Positive(t, c.Draws2pc)
		if rivals == 8 {
			assert.NotEqual(t, c.Theory, c.ClosedForm, "eight rivals have their own law")
		}
	}
}

func TestFidelityHanoiMatchesTheory(t *testing.T) {
	c, err := fidelityHanoi(context.Background(), 5, 6, 2, 1, 0.8, 2)
	require.NoError(t, err)
	assert.Equal(t, 126, c.Votes.N, "two 6-disk runs")
	assert.Less(t, math.Abs(c.Z), 4.0, "%+v", c)
	assert.True(t, c.Wrong.Contains(c.WrongTheory), "%+v", c)
}

// TestStrategiesOnTheSameSteps: every strategy sees the same draws, so
// waves decide exactly the steps sequential decides, with the same
// samples; majority pays 2k-1; batches pay whole batches.
func TestStrategiesOnTheSameSteps(t *testing.T) {
	ctx := context.Background()
	model, err := stepModel(sim.Config{Seed: 3, P: 0.75, WrongAnswers: 8}, 1)
	require.NoError(t, err)
	byName := map[string]strategy{}
	for _, s := range strategies() {
		byName[s.name] = s
	}
	const k = 3
	differ := 0
	for step := range 300 {
		n1, r1, rounds1, err := byName["sequential"].decide(ctx, model, step, k, nil)
		require.NoError(t, err)
		n2, r2, rounds2, err := byName["waves"].decide(ctx, model, step, k, nil)
		require.NoError(t, err)
		assert.Equal(t, n1, n2, "step %d: waves draw exactly sequential's samples", step)
		assert.Equal(t, r1, r2, "step %d: and decide the same", step)
		assert.Equal(t, n1, rounds1)
		assert.LessOrEqual(t, rounds2, rounds1)
		n, _, rounds, err := byName["majority(2k-1)"].decide(ctx, model, step, k, nil)
		require.NoError(t, err)
		assert.Equal(t, 2*k-1, n)
		assert.Equal(t, 1, rounds)
		n, _, rounds, err = byName["batch4"].decide(ctx, model, step, k, nil)
		require.NoError(t, err)
		assert.Equal(t, 4*rounds, n)
		n, r, _, err := byName["first-to-k"].decide(ctx, model, step, k, nil)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, n, k)
		if r != r1 {
			differ++
		}
	}
	assert.Positive(t, differ, "first-to-k is another rule: at p = 0.75 it decides some steps otherwise")
}

func TestAdaptiveHook(t *testing.T) {
	policy, err := AdaptiveFromK(func(steps int, target float64) (func(int, int, int) int, error) {
		return func(step, winner, valid int) int { return 2 + step%2 }, nil
	})(100, 0.95)
	require.NoError(t, err)
	model, err := stepModel(sim.Config{Seed: 3, P: 0.9, WrongAnswers: 8}, 1)
	require.NoError(t, err)
	st := &adaptiveState{policy: policy}
	for step := range 10 {
		_, _, _, err := adaptiveDecide(context.Background(), model, step, 0, st)
		require.NoError(t, err)
	}
	assert.Equal(t, 25, st.kSum, "k alternates 2, 3")
	assert.Positive(t, st.valid)
}

// TestDifficultyAtKMin: hard steps whose errors agree raise the wrong-step
// rate far above the law at the mean p, and an ensemble of differently
// seeded models brings it back down.
func TestDifficultyAtKMin(t *testing.T) {
	t.Parallel()
	k, err := laws.KMin(difficultyPlan, difficultyP, difficultyTarget)
	require.NoError(t, err)
	ctx := context.Background()
	one, err := difficultyRun(ctx, 9, 4000, 0.2, 1, 1, k)
	require.NoError(t, err)
	ens, err := difficultyRun(ctx, 9, 4000, 0.2, 1, 3, k)
	require.NoError(t, err)
	assert.Greater(t, one.Wrong.Lo, one.Theory*100, "hard steps that agree beat the vote: %+v", one)
	assert.True(t, one.Wrong.Contains(one.Bound) || one.Wrong.Rate < one.Bound, "the one-rival bound holds: %+v", one)
	assert.Less(t, ens.Wrong.Rate, one.Wrong.Rate/3, "an ensemble with other hard steps outvotes them: %+v vs %+v", ens, one)
}

func TestBuckets(t *testing.T) {
	fn := func(names ...string) *profile.Sample {
		s := &profile.Sample{}
		for _, n := range names {
			s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: n}}}})
		}
		return s
	}
	assert.Equal(t, "model", bucketOf(fn("strings.Index", "github.com/mdap-go/mdap/maker/sim.(*Model).GenerateContent", "github.com/mdap-go/mdap/vote.drawOne[...]")))
	assert.Equal(t, "key", bucketOf(fn("crypto/sha256.block", "github.com/mdap-go/mdap/intent.Key", "github.com/mdap-go/mdap/maker.judge")))
	assert.Equal(t, "parse", bucketOf(fn("github.com/mdap-go/mdap/maker/hanoi.ParseReply", "github.com/mdap-go/mdap/maker/hanoi.(*Task).Decode", "github.com/mdap-go/mdap/maker.judge")))
	assert.Equal(t, "stack growth", bucketOf(fn("runtime.copystack", "runtime.newstack", "github.com/mdap-go/mdap/maker/sim.(*Model).GenerateContent")))
	assert.Equal(t, "journal", bucketOf(fn("strconv.AppendInt", "github.com/mdap-go/mdap/maker.appendStepRecord", "github.com/mdap-go/mdap/maker.(*Journal).step")))
	assert.Equal(t, "vote", bucketOf(fn("github.com/mdap-go/mdap/vote.(*racer[...]).commit")))
	assert.Equal(t, "solver+runtime", bucketOf(fn("runtime.futex")))
}

func TestRunRefusesUnknownSuite(t *testing.T) {
	_, err := Run(context.Background(), Options{Suites: []string{"fidelity", "speed"}})
	require.ErrorIs(t, err, ErrSuite)
	assert.Contains(t, err.Error(), `"speed"`)
}

// TestRunRealAndWrite runs the real suite small and writes its report.
func TestRunRealAndWrite(t *testing.T) {
	measuringSuite(t) // three transports at model latency, CPU per sample
	var ticks []int
	rep, err := Run(context.Background(), Options{Suites: []string{"real"}, Quick: true, Seed: 2, Command: "test",
		Progress: func(suite string, done, total int) { ticks = append(ticks, done) }})
	require.NoError(t, err)
	require.NotNil(t, rep.Real)
	assert.Nil(t, rep.Fidelity)
	require.Len(t, rep.Real.Rows, 3)
	inproc, http, engine := rep.Real.Rows[0], rep.Real.Rows[1], rep.Real.Rows[2]
	assert.True(t, inproc.Solved && http.Solved && engine.Solved)
	assert.InDelta(t, 1, inproc.WallRatio, 1e-9)
	assert.Greater(t, http.CPURatio, 1.0, "HTTP costs more CPU per sample than a call")
	assert.Greater(t, engine.CPURatio, 1.0, "so does a job on the engine")
	assert.Equal(t, []int{0, 1}, ticks)

	dir := t.TempDir()
	require.NoError(t, rep.WriteDir(dir))
	md, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Real transports")
	assert.Contains(t, string(md), "`test`")
	assert.FileExists(t, filepath.Join(dir, DataFile))
}

// TestChartsAndMarkdown renders every chart and section from a small
// report built by the suites' own pieces.
func TestChartsAndMarkdown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := &FidelityResult{RaceSteps: 200, HanoiDisks: 5, HanoiSeeds: 1, DifficultyP: 0.99, DifficultyK: 4, DifficultyPlanSteps: 100}
	for _, rivals := range []int{1, 8} {
		for _, p := range fidelityPs {
			for _, k := range []int{1, 2} {
				c, err := fidelityRace(ctx, 1, 200, rivals, p, k)
				require.NoError(t, err)
				f.Cells = append(f.Cells, c)
			}
		}
	}
	d, err := difficultyRun(ctx, 1, 500, 0.05, 1, 1, 4)
	require.NoError(t, err)
	f.Difficulty = []DifficultyRow{d}
	s := &StrategiesResult{Rules: map[string]string{"sequential": "x", "waves": "y"}, Scenarios: []Scenario{{Name: "p=0.99", P: 0.99, K: 3, Steps: 10, Members: 1}},
		Rows: []StrategyRow{{Scenario: "p=0.99", Strategy: "sequential", Steps: 10, SamplesPerStep: Mean{Mean: 3}}, {Scenario: "p=0.99", Strategy: "waves", Steps: 10, SamplesPerStep: Mean{Mean: 3}}, {Scenario: "p=0.99", Strategy: "adaptive", NotRun: notWiredAdaptive}},
		Wall: []WallRow{{Scenario: "p=0.99", Latency: "fixed", Strategy: "waves", Steps: 10, PerStep: Mean{Mean: 1.1}, Rounds: 1.03}}, Latency: 1e6, Sigma: 1, Price: ReferencePrice}
	sc := &ScaleResult{K: 3, Rows: []ScaleRow{{Disks: 10, PeakHeapMB: 3, CPUPerSample: 30, Split: map[string]float64{"model": 10, "parse": 8}, Overhead: 20}, {Disks: 12, PeakHeapMB: 3.1, CPUPerSample: 31}}}
	rep := &Report{Fidelity: f, Strategies: s, Scale: sc, Real: &RealResult{Rows: []TransportRow{{Transport: "in-process", Runs: 1}}}}
	rep.Goals = goals(rep)
	charts, err := rep.Charts()
	require.NoError(t, err)
	for _, name := range []string{"fidelity_votes.svg", "fidelity_wrong.svg", "strategies.svg", "strategies_wall.svg", "scale_time.svg", "scale_memory.svg"} {
		require.Contains(t, charts, name)
		assert.True(t, bytes.Contains(charts[name], []byte("<svg")), name)
	}
	md := rep.Markdown()
	for _, want := range []string{"## Goals", "## Fidelity", "### Per-step difficulty", "## Strategies", "not run: no margin policy", "## Scale", "## Real transports"} {
		assert.Contains(t, md, want)
	}
	met := map[string]string{}
	for _, g := range rep.Goals {
		met[g.Goal] = g.Met
	}
	assert.Equal(t, "yes", met["waves at Parallel = k: wall time per step at most 1.3 model calls at p = 0.99, k = 3"])
	assert.True(t, strings.HasPrefix(met["20-disk Hanoi (1,048,575 steps) on the sim, zero wrong steps, in under 2 minutes (aim: one)"], "not run"))
}
