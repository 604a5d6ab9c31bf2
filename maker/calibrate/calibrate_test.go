package calibrate_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/categories/selection"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/executor/fstools"
	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/stats"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/mdap-go/mdap/vote"
	"github.com/mdap-go/mdap/vote/rivals"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// hanoiRun calibrates 20-disk Hanoi (the paper's million steps) on the
// simulated model.
func hanoiRun(t *testing.T, cfg sim.Config, steps, samples int) calibrate.Report {
	t.Helper()
	return hanoiCalibration(t, cfg, calibrate.Config{StepsSampled: steps, Samples: samples})
}

// hanoiCalibration calibrates 20-disk Hanoi on the simulated model with
// cal's settings (seed 1).
func hanoiCalibration(t *testing.T, cfg sim.Config, cal calibrate.Config) calibrate.Report {
	t.Helper()
	model, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	task, err := calibrate.Hanoi(20)
	require.NoError(t, err)
	cal.Steps, cal.Solver, cal.Seed = task, &maker.Solver{Model: model}, 1
	rep, err := calibrate.Run(context.Background(), cal)
	require.NoError(t, err)
	return rep
}

func TestRunContainsTheTrueP(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.P = 0.99
	rep := hanoiRun(t, cfg, 100, 10)
	e := rep.All
	assert.Equal(t, hanoi.TotalSteps(20), rep.Total)
	assert.Len(t, rep.Sampled, 100)
	assert.Equal(t, 1000, e.Samples)
	assert.Equal(t, e.Samples, e.Valid+e.Flagged+e.Errors)
	assert.Equal(t, e.Valid, e.Correct+e.Wrong)
	assert.LessOrEqual(t, e.Low, 0.99, "the interval holds the true p")
	assert.GreaterOrEqual(t, e.High, 0.99)
	assert.Less(t, e.Low, e.P)
	assert.Greater(t, e.High, e.P)
	assert.GreaterOrEqual(t, e.DesignEffect, 1.0)
	// A million steps: 100 sampled steps cannot exclude a spread whose
	// tail of hard steps sinks the run, so the plan is undecided, with
	// the most hopeful k and a forecast of the steps that would settle it.
	assert.True(t, e.Undecided)
	assert.Zero(t, e.KMin)
	assert.Nil(t, e.Plan)
	assert.Positive(t, e.KBest)
	assert.NotZero(t, e.MoreSteps)
	assert.Greater(t, e.ICCHigh, 0.0, "an undetected spread is not zero")
	// At k, the plan's bound over the region is below its estimate at the
	// fit, and a race takes at least k samples.
	at := e.PlanAt(e.KBest+2, rep.Total)
	assert.LessOrEqual(t, at.PFullBound, at.PFull)
	assert.Greater(t, at.SamplesPerStep, float64(at.K), "a race takes at least k samples")
	assert.InDelta(t, at.SamplesPerStep*float64(rep.Total), at.Samples, 1e-6)
	require.Len(t, rep.Models, 1)
	assert.Equal(t, e, rep.Models[0].Estimate, "one model: its estimate is the whole")
	assert.Contains(t, rep.String(), "beta-binomial profile likelihood")
}

func TestRunTellsCorrelatedFromSpreadErrors(t *testing.T) {
	t.Parallel()
	// p = 0.8 and 20 samples a step: about 4 wrong answers per step, so
	// many pairs to compare.
	for _, c := range []struct {
		name          string
		wrong         int
		concentration float64
		correlated    bool
	}{
		{"one wrong answer", 1, 0, true},
		{"concentration 1", 8, 1, true},
		{"spread over 8", 8, 0, false},
	} {
		cfg := sim.Config{P: 0.8, WrongAnswers: c.wrong, Concentration: c.concentration}
		// The repeats are counted from the samples: no plan needed (a
		// million steps' plan is seconds race-built).
		rep := hanoiCalibration(t, cfg, calibrate.Config{StepsSampled: 30, Samples: 20, NoPlan: true})
		r := rep.All.Repeat
		require.Greater(t, r.Pairs, 100, c.name)
		if c.correlated {
			assert.Equal(t, r.Pairs, r.Same, "%s: every pair agrees", c.name)
			assert.Equal(t, 1.0, r.Rate, c.name)
			assert.Equal(t, 1.0, r.TopShare, c.name)
			assert.Contains(t, rep.String(), "100% of pairs of wrong answers to one step are the same answer", c.name)
			assert.Contains(t, rep.String(), "correlated errors; k_min assumes one rival, which is then exact", c.name)
			continue
		}
		// Spread evenly over 8, two wrong answers agree with probability
		// 1/8; the threshold of 1/2 is far above any plausible estimate
		// from hundreds of pairs.
		assert.Less(t, r.Rate, 0.5, c.name)
		assert.Contains(t, rep.String(), "errors spread", c.name)
	}
}

func TestDesignEffectWhenStepsDiffer(t *testing.T) {
	t.Parallel()
	// Right on odd steps, wrong on even ones: the samples of a step all
	// agree, so 10 samples of a step are worth one. The cluster-robust
	// variance over the binomial one is then exactly M·k/(k-1) with k = 20
	// steps of M = 10 samples.
	model := maker.ModelFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		id, _ := maker.SampleIDFrom(ctx)
		n := id.Step
		if n%2 == 0 {
			n = -1
		}
		return maker.TextResponse(numberReply(n), "stop"), nil
	})
	rep, err := calibrate.Run(context.Background(), calibrate.Config{Steps: numbers{20}, Solver: &maker.Solver{Model: model}, StepsSampled: 20, Samples: 10})
	require.NoError(t, err)
	e := rep.All
	assert.Equal(t, 0.5, e.P)
	assert.InDelta(t, 10*20.0/19, e.DesignEffect, 1e-9)
	// The interval treats each step as a cluster: about as wide as 20
	// independent trials (Clopper-Pearson's for 10 of 20 is [0.27, 0.73];
	// the likelihood interval is a little narrower), far wider than 200.
	lo, hi := stats.ClopperPearson(10, 20, 0.95)
	assert.InDelta(t, lo, e.Low, 0.03)
	assert.InDelta(t, hi, e.High, 0.03)
	lo200, hi200 := stats.ClopperPearson(100, 200, 0.95)
	assert.Less(t, e.Low, lo200-0.1)
	assert.Greater(t, e.High, hi200+0.1)
	require.NotNil(t, e.Spread)
	assert.Greater(t, e.Spread.ICC, 0.9, "steps all right or all wrong")
	assert.Equal(t, 10, e.HardSteps, "the even steps' majority is wrong")
	assert.True(t, e.Unreachable)
	assert.Zero(t, e.KMin, "p may be 1/2: no margin helps")
	assert.Contains(t, e.NoK, "no k reaches 0.95")
	assert.Nil(t, e.Plan)

	// Independent samples: the estimated design effect is a chi-square
	// with k-1 = 99 degrees of freedom over 99, near 1. Its 99.99%
	// quantile is about 1 + 3.72·sqrt(2/99) = 1.53.
	rep, err = calibrate.Run(context.Background(), calibrate.Config{Steps: numbers{1 << 10}, Solver: &maker.Solver{Model: numberSim(t, sim.Config{P: 0.9, Seed: 5})}, StepsSampled: 100, Samples: 10})
	require.NoError(t, err)
	assert.Less(t, rep.All.DesignEffect, 1.53)
}

// pricedSim is a simulated model with a price of its own.
type pricedSim struct {
	*sim.Model
	price maker.Price
}

func (p pricedSim) Price() maker.Price { return p.price }

func TestRunEstimatesEachModelOfAnEnsemble(t *testing.T) {
	t.Parallel()
	good := pricedSim{numberSim(t, sim.Config{P: 0.99, Seed: 1}), maker.Price{InputPerMillion: 1e6}}
	weak := numberSim(t, sim.Config{P: 0.9, Seed: 2})
	ens, err := maker.NewEnsemble(good, weak)
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{Price: maker.Price{OutputPerMillion: 1e6}}, Model: ens}
	rep, err := calibrate.Run(context.Background(), calibrate.Config{Steps: numbers{1 << 10}, Solver: s, StepsSampled: 100, Samples: 20, K: 3})
	require.NoError(t, err)
	require.Len(t, rep.Models, 2)
	for i, p := range []float64{0.99, 0.9} {
		m := rep.Models[i]
		assert.Equal(t, maker.ModelIdentity(ens.Member(i)), m.Model)
		assert.Equal(t, 1000, m.Samples, "samples go to the members in turn")
		assert.LessOrEqual(t, m.Low, p, "model %d", i)
		assert.GreaterOrEqual(t, m.High, p, "model %d", i)
		require.NotNil(t, m.AtK)
		assert.Equal(t, 3, m.AtK.K)
	}
	// Each model at its own price: $1 a token in, or $1 a token out.
	assert.Equal(t, maker.Price{InputPerMillion: 1e6}, rep.Models[0].Price)
	assert.InDelta(t, rep.Models[0].InputTokens, rep.Models[0].CostPerSample, 1e-9)
	assert.InDelta(t, rep.Models[1].OutputTokens, rep.Models[1].CostPerSample, 1e-9)
	// The ensemble alternates the two, so its valid replies are right with
	// the mean probability.
	all := rep.All
	assert.Equal(t, 2000, all.Samples)
	assert.LessOrEqual(t, all.Low, 0.945)
	assert.GreaterOrEqual(t, all.High, 0.945)
	assert.InDelta(t, (rep.Models[0].CostPerSample+rep.Models[1].CostPerSample)/2, all.CostPerSample, 1e-9)
	assert.Greater(t, rep.Models[1].KBest, rep.Models[0].KBest, "the weaker model needs a larger margin")
	text := rep.String()
	assert.Contains(t, text, "the ensemble, samples to each model in turn:")
	assert.Equal(t, 3, strings.Count(text, "  p = "), "each model and the ensemble")
}

func TestRunIsDeterministic(t *testing.T) {
	t.Parallel()
	run := func(parallel int) calibrate.Report {
		cfg := sim.Config{P: 0.95, Seed: 9, WrongAnswers: 3, FlagRate: 0.05, ErrorRate: 0.02}
		rep, err := calibrate.Run(context.Background(), calibrate.Config{
			Steps: numbers{1 << 10}, Solver: &maker.Solver{Model: numberSim(t, cfg)}, StepsSampled: 40, Samples: 10, Seed: 3, Parallel: parallel,
		})
		require.NoError(t, err)
		rep.Wall = 0
		return rep
	}
	one := run(1)
	assert.Equal(t, one, run(32), "the report depends on the samples, not on their schedule")
	assert.Positive(t, one.All.Errors, "provider errors are counted")
	assert.Positive(t, one.All.Flagged)
	assert.InDelta(t, float64(one.All.Valid)/float64(one.All.Valid+one.All.Flagged), one.All.ValidRate, 1e-12)
}

// TestUntilDecidedCapOfASmallTaskCountsItsRealFirstRound: the first
// round samples min(StepsSampled, Steps.Total()) steps (all of a smaller
// task, as StepsSampled's doc says), so with UntilDecided a MaxSamples
// that covers that round is a valid cap (3 steps times 10 samples within
// 500, though StepsSampled times Samples is 1000), and one below it is
// refused with the round's real size. Without Steps, Validate cannot
// count the round and leaves the rule to Run.
func TestUntilDecidedCapOfASmallTaskCountsItsRealFirstRound(t *testing.T) {
	t.Parallel()
	solver := &maker.Solver{Model: numberSim(t, sim.Config{P: 0.9})}
	cfg := calibrate.Config{Steps: numbers{3}, Solver: solver, UntilDecided: true, MaxSamples: 500}
	rep, err := calibrate.Run(context.Background(), cfg)
	require.NotErrorIs(t, err, calibrate.ErrConfig, "the first round is 30 samples, within the cap of 500")
	assert.Len(t, rep.Sampled, 3, "every step of the task sampled")

	cfg.MaxSamples = 29
	_, err = calibrate.Run(context.Background(), cfg)
	require.ErrorIs(t, err, calibrate.ErrConfig)
	assert.Contains(t, err.Error(), "MaxSamples = 29: below the first round's 30 samples (the task's 3 steps times Samples): raise it")
	assert.EqualError(t, cfg.Validate(), err.Error())
	cfg.Steps = nil
	assert.NoError(t, cfg.Validate(), "the round's size is unknown without Steps")
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	solver := &maker.Solver{Model: numberSim(t, sim.Config{P: 0.9})}
	good := calibrate.Config{Steps: numbers{100}, Solver: solver}
	for _, c := range []struct {
		field  string
		change func(*calibrate.Config)
	}{
		{"Steps", func(c *calibrate.Config) { c.Steps = nil }},
		{"Solver", func(c *calibrate.Config) { c.Solver = &maker.Solver{} }},
		{"StepsSampled", func(c *calibrate.Config) { c.StepsSampled = -1 }},
		{"Samples", func(c *calibrate.Config) { c.Samples = calibrate.MaxSamples + 1 }},
		{"StepsSampled = 100000 plus Samples = 1000", func(c *calibrate.Config) { c.StepsSampled, c.Samples = 100_000, 1000 }},
		{"Target", func(c *calibrate.Config) { c.Target = 1 }},
		{"Confidence", func(c *calibrate.Config) { c.Confidence = -0.5 }},
		{"K", func(c *calibrate.Config) { c.K = -1 }},
		{"Parallel", func(c *calibrate.Config) { c.Parallel = -2 }},
		{"MaxSamples = 999: below the first round's 1000 samples", func(c *calibrate.Config) { c.UntilDecided, c.MaxSamples = true, 999 }},
		{"steps", func(c *calibrate.Config) { c.Steps = numbers{0} }},
	} {
		cfg := good
		c.change(&cfg)
		_, err := calibrate.Run(context.Background(), cfg)
		require.ErrorIs(t, err, calibrate.ErrConfig, c.field)
		assert.Contains(t, err.Error(), c.field)
		if c.field == "Steps" || c.field == "Solver" || c.field == "steps" {
			continue
		}
		// A setting's refusal names the field, and Validate refuses it
		// alike without a Solver, and but for the first round's cap
		// (which counts the task's steps) without Steps (what a command
		// checks first).
		var fe *maker.FieldError
		require.ErrorAs(t, err, &fe, c.field)
		assert.Equal(t, "calibrate.Config", fe.Config)
		assert.True(t, strings.HasPrefix(c.field, fe.Fields[0].Name), "%s: %v", c.field, err)
		cfg.Solver = nil
		assert.EqualError(t, cfg.Validate(), err.Error(), c.field)
		if cfg.Steps = nil; !cfg.UntilDecided {
			assert.EqualError(t, cfg.Validate(), err.Error(), c.field)
		}
	}
	assert.NoError(t, calibrate.Config{}.Validate(), "the defaults")

	_, err := calibrate.Run(context.Background(), calibrate.Config{Steps: broken{}, Solver: solver})
	require.ErrorIs(t, err, calibrate.ErrStep)
	assert.Contains(t, err.Error(), "no such step")

	flagged := &maker.Solver{Model: numberSim(t, sim.Config{P: 0.9, FlagRate: 1})}
	rep, err := calibrate.Run(context.Background(), calibrate.Config{Steps: numbers{100}, Solver: flagged, StepsSampled: 5})
	require.ErrorIs(t, err, calibrate.ErrNoVotes)
	assert.Equal(t, 50, rep.All.Flagged, "the report says why")
	assert.Contains(t, rep.String(), "p unknown")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = calibrate.Run(ctx, good)
	assert.ErrorIs(t, err, context.Canceled)

	coin := &maker.Solver{Model: numberSim(t, sim.Config{P: 0.3, Seed: 1})}
	rep, err = calibrate.Run(context.Background(), calibrate.Config{Steps: numbers{100}, Solver: coin})
	require.NoError(t, err, "a bad model is a finding, not an error")
	assert.Zero(t, rep.All.KMin)
	assert.True(t, rep.All.Unreachable)
	assert.Contains(t, rep.String(), "k_min: none: no k reaches 0.95: the upper bound on p, 0.3340, is not above 1/2")
}

type broken struct{}

func (broken) Total() int { return 10 }
func (broken) Step(context.Context, int) (calibrate.Step, error) {
	return calibrate.Step{}, errors.New("no such step")
}

func TestHanoiStepsAskTheSolutionsSteps(t *testing.T) {
	t.Parallel()
	steps, err := calibrate.Hanoi(6)
	require.NoError(t, err)
	require.Equal(t, 63, steps.Total())
	moves := make([]hanoi.Move, 0, 63)
	for m := range hanoi.Moves(6) {
		moves = append(moves, m)
	}
	for i := range steps.Total() {
		st, err := steps.Step(context.Background(), i)
		require.NoError(t, err)
		// The correct answer is the solution's next move ...
		a, err := hanoi.AnswerFromValue(st.Correct.Value, 6)
		require.NoError(t, err)
		assert.Equal(t, moves[i], a.Move, "step %d", i)
		// ... and what the simulated model, reading the prompt, calls
		// correct: the prompt is a real step prompt of that state.
		text, err := hanoi.Oracle{}.Correct(sim.Query{Prompt: sim.PromptText(st.Messages)})
		require.NoError(t, err)
		out, err := st.Decode(maker.Reply{Text: text})
		require.NoError(t, err)
		k1, err := intent.Key(out)
		require.NoError(t, err)
		k2, err := intent.Key(st.Correct)
		require.NoError(t, err)
		assert.Equal(t, k1, k2, "step %d", i)
	}
	_, err = steps.Step(context.Background(), 63)
	assert.Error(t, err)
	_, err = calibrate.Hanoi(0)
	assert.ErrorIs(t, err, hanoi.ErrConfig)
}

func specExecutor(t *testing.T, tools string) *executor.Executor {
	t.Helper()
	tax := categories.Builtin()
	policy, err := selection.Parse(tax, tools)
	require.NoError(t, err)
	ex, err := fstools.New(filepath.Join("..", "..", "testdata", "spec", "repo"), executor.WithTaxonomy(tax), executor.WithPolicy(policy))
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return ex
}

func TestSpecStepsRunTheScriptsToolCalls(t *testing.T) {
	t.Parallel()
	sp, err := spec.Load(filepath.Join("..", "..", "testdata", "spec", "find-version.json"))
	require.NoError(t, err)
	calib := func(ex *executor.Executor) calibrate.Estimate {
		steps, err := calibrate.Spec(sp, ex)
		require.NoError(t, err)
		require.Equal(t, 3, steps.Total())
		model, err := sim.New(spec.Oracle{Spec: sp}, sim.Config{P: 1})
		require.NoError(t, err)
		rep, err := calibrate.Run(context.Background(), calibrate.Config{Steps: steps, Solver: &maker.Solver{Model: model}, Samples: 4})
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1, 2}, rep.Sampled)
		return rep.All
	}
	// Read-only tools run: each step's prompt shows the result its script
	// needs, and a perfect model is right every time.
	e := calib(specExecutor(t, ""))
	assert.Equal(t, 12, e.Valid)
	assert.Equal(t, 12, e.Correct)
	// Without tools the observations are denials, and the model cannot
	// know steps 1 and 2: only step 0's samples are right.
	e = calib(specExecutor(t, "none"))
	assert.Equal(t, 4, e.Correct)

	steps, err := calibrate.Spec(sp, specExecutor(t, ""))
	require.NoError(t, err)
	st, err := steps.Step(context.Background(), 1)
	require.NoError(t, err)
	assert.Contains(t, sim.PromptText(st.Messages), `src/version.go:4: const Version = "1.4.2"`)
	assert.Contains(t, sim.PromptText(st.Messages), "Step: 1")

	_, err = calibrate.Spec(sp, nil)
	require.ErrorIs(t, err, calibrate.ErrConfig, "tool calls need an executor")
	assert.Contains(t, err.Error(), "calls tool grep")
	noScript := *sp
	noScript.Script = nil
	_, err = calibrate.Spec(&noScript, nil)
	assert.ErrorIs(t, err, calibrate.ErrConfig)
}

func TestRunPlansWithMeasuredRivals(t *testing.T) {
	t.Parallel()
	model := numberSim(t, sim.Config{P: 0.95, WrongAnswers: 4, Seed: 2})
	// The plan at k = 6 (every step of 100 sampled, 20 samples each, may
	// leave k_min undecided).
	cfg := calibrate.Config{Steps: numbers{100}, Solver: &maker.Solver{Model: model}, Samples: 20, K: 6}
	rep, err := calibrate.Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.Nil(t, rep.All.Rivals, "off by default: the laws with rivals can be slow")
	assert.Nil(t, rep.All.AtK.WithRivals)

	cfg.WithRivals = true
	rep, err = calibrate.Run(context.Background(), cfg)
	require.NoError(t, err)
	e := rep.All
	require.GreaterOrEqual(t, e.Repeat.Pairs, 10)
	require.NotNil(t, e.Rivals)
	assert.Equal(t, int(math.Round(1/e.Repeat.Rate)), e.Rivals.N)
	assert.GreaterOrEqual(t, e.Rivals.N, 2, "errors spread over 4 answers")
	r := e.AtK.WithRivals
	require.NotNil(t, r)
	ps, err := rivals.PStep(e.P, e.AtK.K, *e.Rivals)
	require.NoError(t, err)
	assert.InDelta(t, math.Pow(ps, 100), r.PFull, 1e-9)
	assert.GreaterOrEqual(t, r.PFull, e.AtK.PFull, "spread errors: the right answer wins more often than against one rival")
	n, err := rivals.ExpectedSamples(e.P, e.AtK.K, *e.Rivals)
	require.NoError(t, err)
	assert.InDelta(t, n/e.ValidRate, r.SamplesPerStep, 1e-9)
	assert.Contains(t, rep.String(), "with the errors spread as measured")
}

// recorder is a simulated model that records each call's temperature and
// reply cap by (prompt, sample index).
type recorder struct {
	*sim.Model
	mu    sync.Mutex
	calls map[string][2]float64
}

func (r *recorder) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	id, ok := maker.SampleIDFrom(ctx)
	if !ok {
		return nil, errors.New("no sample id")
	}
	r.mu.Lock()
	r.calls[fmt.Sprintf("%s\x00%d", sim.PromptText(msgs), id.Index)] = [2]float64{o.Temperature, float64(o.MaxTokens)}
	r.mu.Unlock()
	return r.Model.GenerateContent(ctx, msgs, opts...)
}

// TestCalibrationAsksAsARunWould: `maker calibrate --help` says it asks
// the model "exactly as a run would (the same prompt, reply cap,
// temperatures and red flags)". Every request calibration sends for a
// 3-disk Hanoi (every step, three samples each) has the prompt, reply
// cap and temperature of the request with the same sample index in a run
// of that task with the same solver settings.
func TestCalibrationAsksAsARunWould(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.P = 1 // the run visits every state of the solution
	newRecorder := func() *recorder {
		m, err := sim.New(hanoi.Oracle{}, cfg)
		require.NoError(t, err)
		return &recorder{Model: m, calls: map[string][2]float64{}}
	}
	ran := newRecorder()
	task, err := hanoi.New(3)
	require.NoError(t, err)
	_, err = (&maker.Solver{Config: maker.Config{MaxTokens: 321, Vote: vote.Config{K: 3, Parallel: 1}}, Model: ran}).Solve(context.Background(), task)
	require.NoError(t, err)

	calibrated := newRecorder()
	steps, err := calibrate.Hanoi(3)
	require.NoError(t, err)
	_, err = calibrate.Run(context.Background(), calibrate.Config{Steps: steps, Solver: &maker.Solver{Config: maker.Config{MaxTokens: 321}, Model: calibrated}, StepsSampled: 7, Samples: 3, Seed: 1})
	require.NoError(t, err)
	require.Len(t, calibrated.calls, 21, "7 steps, 3 samples each")
	for key, got := range calibrated.calls {
		want, ok := ran.calls[key]
		short := key[strings.LastIndex(key, "Previous move:"):] // the step and the sample index
		if assert.True(t, ok, "calibration asked a prompt or index no run asks: %q", short) {
			assert.Equal(t, want, got, "temperature and reply cap of %q", short)
		}
	}
}
