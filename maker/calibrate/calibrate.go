package calibrate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
	"golang.org/x/sync/errgroup"
)

// Errors, for errors.Is.
var (
	// ErrConfig: a Config field is out of range, or the task cannot be
	// calibrated (a spec without a script, ...). The message names it.
	ErrConfig = errors.New("invalid configuration")
	// ErrStep: the task could not build a sampled step.
	ErrStep = errors.New("step could not be built")
	// ErrNoVotes: no sample was valid (every one failed or was
	// red-flagged), so p cannot be estimated. Run returns it with the
	// Report of what happened: its flags and errors say why.
	ErrNoVotes = errors.New("no valid sample")
	// ErrBudget: the Solver's Budget refused a sample, so the calibration
	// stopped before it drew them all (no sample starts after the first
	// refused one; those in flight finish). It also wraps maker.ErrBudget.
	ErrBudget = errors.New("spending cap reached")
)

// Defaults of Config's zero fields.
const (
	DefaultStepsSampled = 100
	DefaultSamples      = 10
	DefaultTarget       = 0.95
	DefaultConfidence   = 0.95
	DefaultParallel     = 8
)

// Bounds of Config fields, against typos.
const (
	MaxStepsSampled = 100_000
	MaxSamples      = 10_000
	MaxParallel     = 4096
	// MaxDraws bounds StepsSampled × Samples.
	MaxDraws = 10_000_000
)

// Config is a calibration: which task, which solver, how many steps and
// samples.
type Config struct {
	// Steps is the task. Required.
	Steps Steps
	// Solver is the solver the run will use; its Model (a single model or
	// a maker.Ensemble), MaxTokens, Temperature, Flags, CallOptions, Tools,
	// ToolDeclaration, Structured (with each Step's Schema), Timeout,
	// Observer, Budget and Executor draw and judge each sample exactly as
	// its races would (Solver.Draw: the run's own sample agent), and Price
	// prices it (a member that is maker.Priced at its own price). Its
	// Vote, Journal and the rest are not used. Required, with a Model.
	Solver *maker.Solver
	// StepsSampled is how many distinct steps are drawn, uniformly from
	// the task's Total (all of them if Total is smaller). Default
	// DefaultStepsSampled.
	StepsSampled int
	// Samples is how many samples each sampled step gets (sample indices
	// 0..Samples-1, so the temperature schedule is the run's). Default
	// DefaultSamples.
	Samples int
	// Seed chooses the sampled steps: the same seed, the same steps.
	Seed uint64
	// Target is the probability that the whole run succeeds, in (0, 1),
	// that k_min is planned for. Default DefaultTarget.
	Target float64
	// Confidence is the two-sided confidence of the interval on p, in
	// (0, 1). Default DefaultConfidence.
	Confidence float64
	// K, if set, adds the plan at this margin (Estimate.AtK): what the
	// k you had in mind would give.
	K int
	// WithRivals adds to each plan the same run with the wrong answers
	// spread as measured (Plan.WithRivals), by the laws with rivals. They
	// are exact but costly: a dynamic program of up to
	// vote.MaxLawWork state updates per plan, seconds at k >= 6 with
	// several rivals.
	WithRivals bool
	// Parallel is the most samples in flight at once. Default
	// DefaultParallel.
	Parallel int
	// SamplesPerCall is the run's samples per provider request
	// (maker.Solver.SamplesPerCall, --samples-per-call): the plans' costs
	// bill the prompt once a request (see Plan.RequestsPerStep). 0 or 1:
	// one request per sample; maker.SamplesPerCallAuto: k samples a
	// request. Calibration itself draws one sample a request.
	SamplesPerCall int
	// Progress, if set, is called after each sample with the samples
	// done and the total, from the goroutine that drew it: concurrently,
	// so it must be safe for concurrent use, and quick.
	Progress func(done, total int)
}

func (c Config) withDefaults() (Config, error) {
	if c.StepsSampled == 0 {
		c.StepsSampled = DefaultStepsSampled
	}
	if c.Samples == 0 {
		c.Samples = DefaultSamples
	}
	if c.Target == 0 {
		c.Target = DefaultTarget
	}
	if c.Confidence == 0 {
		c.Confidence = DefaultConfidence
	}
	if c.Parallel == 0 {
		c.Parallel = DefaultParallel
	}
	switch {
	case c.Steps == nil:
		return c, fmt.Errorf("%w: no Steps", ErrConfig)
	case c.Solver == nil || c.Solver.Model == nil:
		return c, fmt.Errorf("%w: no Solver with a Model", ErrConfig)
	case c.StepsSampled < 1 || c.StepsSampled > MaxStepsSampled:
		return c, fmt.Errorf("%w: StepsSampled %d, want 1 to %d", ErrConfig, c.StepsSampled, MaxStepsSampled)
	case c.Samples < 1 || c.Samples > MaxSamples:
		return c, fmt.Errorf("%w: Samples %d, want 1 to %d", ErrConfig, c.Samples, MaxSamples)
	case c.StepsSampled*c.Samples > MaxDraws:
		return c, fmt.Errorf("%w: StepsSampled × Samples = %d, want at most %d", ErrConfig, c.StepsSampled*c.Samples, MaxDraws)
	case !(c.Target > 0 && c.Target < 1):
		return c, fmt.Errorf("%w: Target %v, want 0 < target < 1", ErrConfig, c.Target)
	case !(c.Confidence > 0 && c.Confidence < 1):
		return c, fmt.Errorf("%w: Confidence %v, want 0 < confidence < 1", ErrConfig, c.Confidence)
	case c.K < 0:
		return c, fmt.Errorf("%w: K %d, want 0 (none) or a margin", ErrConfig, c.K)
	case c.SamplesPerCall < maker.SamplesPerCallAuto || c.SamplesPerCall > maker.MaxSamplesPerCall:
		return c, fmt.Errorf("%w: SamplesPerCall %d, want maker.SamplesPerCallAuto, or 0 to %d", ErrConfig, c.SamplesPerCall, maker.MaxSamplesPerCall)
	case c.Parallel < 1 || c.Parallel > MaxParallel:
		return c, fmt.Errorf("%w: Parallel %d, want 1 to %d", ErrConfig, c.Parallel, MaxParallel)
	}
	return c, nil
}

// Report is what a calibration measured, and the plan it gives.
type Report struct {
	// Total is the task's number of steps, the run planned for.
	Total int `json:"total_steps"`
	// Sampled are the steps sampled, in increasing order.
	Sampled []int `json:"sampled_steps"`
	// SamplesEach is the number of samples per sampled step.
	SamplesEach int     `json:"samples_each"`
	Target      float64 `json:"target"`
	Confidence  float64 `json:"confidence"`
	// Interval names the interval on p: "beta-binomial profile
	// likelihood" (steps as clusters; see Estimate.Low).
	Interval string `json:"interval"`
	// All is the estimate over every sample; for an ensemble, the
	// ensemble as the run would use it (samples go to the members in
	// turn).
	All Estimate `json:"all"`
	// Models is each model's own estimate, as if it ran alone: one entry
	// for a single model, one per member, in order, for an ensemble.
	Models []ModelEstimate `json:"models"`
	// Wall is the time the calibration took.
	Wall time.Duration `json:"wall_ns"`
}

// ModelEstimate is one model's estimate.
type ModelEstimate struct {
	// Model is the model's identity (maker.ModelIdentity).
	Model string      `json:"model"`
	Price maker.Price `json:"price"`
	Estimate
}

// Estimate is what one set of samples says of p, and the run it plans.
type Estimate struct {
	// Samples drawn: Valid + Flagged + Errors. Valid = Correct + Wrong.
	Samples int `json:"samples"`
	Valid   int `json:"valid"`
	Correct int `json:"correct"`
	Wrong   int `json:"wrong"`
	Flagged int `json:"flagged"`
	Errors  int `json:"errors"`
	// Flags counts the red-flagged samples by reason (maker.ErrCutOff's
	// "cut off", ...), as the run's Report does.
	Flags map[string]int `json:"flags"`
	// ValidRate is Valid / (Valid + Flagged): the share of replies that
	// vote. Provider errors are left out (they cost a retry, not a vote).
	ValidRate float64 `json:"valid_rate"`
	// P is Correct / Valid, the pooled share of right valid samples;
	// [Low, High] the interval on the mean per-step p at the Report's
	// Confidence: the profile-likelihood interval of the beta-binomial
	// fit (Spread), each sampled step a cluster, so it widens as steps
	// differ and follows the spread's skew (TestIntervalCoverage checks
	// its coverage over 200 seeds with and without a spread).
	P    float64 `json:"p"`
	Low  float64 `json:"p_low"`
	High float64 `json:"p_high"`
	// Spread is the fitted distribution of per-step p (nil without valid
	// samples): the plans average the run's success over it.
	Spread *Spread `json:"spread,omitempty"`
	// HardSteps counts the sampled steps whose most common valid answer
	// was wrong (a wrong answer had more votes than the right one);
	// HardShare is their share of the steps with valid samples: the
	// hard-step floor. Such a step, if its errors agree, is decided wrong
	// more surely as k grows.
	HardSteps int     `json:"hard_steps"`
	HardShare float64 `json:"hard_share"`
	clusters  int     // the sampled steps with valid samples
	// DesignEffect is the cluster-robust variance of P over the binomial
	// one, at least 1: near 1 the steps are alike; above, some steps are
	// harder than others. Informative only: the interval comes from the
	// fit.
	DesignEffect float64 `json:"design_effect"`
	// Repeat is how often wrong answers to one step repeat.
	Repeat Repeat `json:"wrong_answers_repeat"`
	// Rivals is the spread of wrong answers the plans also use with
	// Config.WithRivals (Plan.WithRivals): round(1/Repeat.Rate) rivals,
	// evenly, when at least 10 pairs of wrong answers show errors that
	// mostly do not repeat; nil otherwise (one rival, the laws' worst
	// case for the wrong-winner rate).
	Rivals *vote.Rivals `json:"rivals,omitempty"`
	// InputTokens and OutputTokens are the mean tokens of a sample;
	// CostPerSample its mean price (failed draws left out).
	InputTokens   float64 `json:"input_tokens_per_sample"`
	OutputTokens  float64 `json:"output_tokens_per_sample"`
	CostPerSample float64 `json:"cost_per_sample"`
	// InputCostPerSample is the prompt's share of CostPerSample: its
	// uncached tokens at the input price and the tokens the provider
	// reported cached (CachedShare of the input) at the cached-input
	// price. The plans assume the run's requests see the same cached
	// share as calibration's, which repeats each step's prompt Samples
	// times.
	InputCostPerSample float64 `json:"input_cost_per_sample"`
	CachedShare        float64 `json:"cached_input_share"`
	// SamplesPerCall is Config.SamplesPerCall, which the plans bill by.
	SamplesPerCall int `json:"samples_per_call,omitempty"`
	// KMin is the smallest margin with which the whole run succeeds with
	// probability at least Target, averaged over the fitted spread of
	// per-step p with its mean at Low (each step's errors to one rival):
	// the margin to run with. KMinPoint is the same with the mean at P.
	// Planning on the mean p alone would understate the failures: the
	// per-step failure is convex in p. 0 when no k up to 200 reaches
	// Target (see NoK, Unreachable).
	KMin      int `json:"k_min"`
	KMinPoint int `json:"k_min_at_p"`
	// NoK says why there is no KMin, when there is none.
	NoK string `json:"no_k,omitempty"`
	// Unreachable: no k reaches Target, because of the hard steps (or a
	// mean p at or below 1/2); maker calibrate then exits 1.
	Unreachable bool `json:"unreachable,omitempty"`
	// Plan is the run at KMin; AtK the run at Config.K, if set.
	Plan *Plan `json:"plan,omitempty"`
	AtK  *Plan `json:"at_k,omitempty"`
}

// Repeat measures how correlated a model's errors are: for each sampled
// step, every pair of its wrong valid answers is the same answer or not.
type Repeat struct {
	// Pairs is the number of pairs of wrong answers to one step; Same
	// those that were the same answer.
	Pairs int `json:"pairs"`
	Same  int `json:"same"`
	// Rate is Same / Pairs: the chance that two wrong answers to a step
	// agree (1 when errors are one answer, 1/m when they spread evenly
	// over m). 1/Rate is the effective number of rival answers. NaN-free:
	// 0 without pairs.
	Rate float64 `json:"rate"`
	// TopShare is, over the steps with two wrong answers or more, the
	// share of their wrong answers that were their step's most common
	// one.
	TopShare float64 `json:"top_share"`
}

// Plan is a run of the task's Total steps at margin K: its success
// averaged over the fitted spread of per-step p, each step's errors to
// one rival answer (exact when errors repeat, and the worst case for the
// wrong-winner rate when they spread); its samples and cost by the
// scaling laws at the mean p (one rival is not the worst case for cost:
// spread errors can make a race longer, by 6% at k = 2 and p = 0.7 with
// 2 rivals; see WithRivals).
type Plan struct {
	K int `json:"k"`
	// PFull is the probability that every step is decided right over the
	// fitted spread with its mean at P; PFullLow with its mean at Low.
	PFull    float64 `json:"p_full"`
	PFullLow float64 `json:"p_full_at_p_low"`
	// SamplesPerStep is the expected samples drawn per step at P
	// (ExpectedSamples / ValidRate); SamplesPerStepLow at Low (a
	// pessimistic figure). Samples is SamplesPerStep × Total.
	SamplesPerStep    float64 `json:"samples_per_step"`
	SamplesPerStepLow float64 `json:"samples_per_step_at_p_low"`
	Samples           float64 `json:"samples"`
	// RequestsPerStep is the expected provider requests per step:
	// SamplesPerStep with one sample a request; SamplesPerStep / n (at
	// least 1) with Estimate.SamplesPerCall n > 1 (auto: n = K), which
	// assumes full requests (a wave's samples of two temperatures take
	// two).
	RequestsPerStep float64 `json:"requests_per_step"`
	// CostPerStep is the prompt billed once a request (RequestsPerStep ×
	// Estimate.InputCostPerSample, cached share included) plus the output
	// of every sample (SamplesPerStep × the output's share of
	// CostPerSample); Cost is CostPerStep × the steps; CostLow the same
	// at SamplesPerStepLow. With one sample a request CostPerStep is
	// SamplesPerStep × CostPerSample.
	CostPerStep float64 `json:"cost_per_step"`
	Cost        float64 `json:"cost"`
	CostLow     float64 `json:"cost_at_p_low"`
	// WithRivals is the same run at P with the wrong answers spread as
	// measured (Estimate.Rivals), by the laws with rivals
	// (vote.PStepWith, vote.ExpectedSamplesWith); nil without a measured
	// spread, or when the laws would cost too much to compute.
	WithRivals *RivalPlan `json:"with_rivals,omitempty"`
}

// RivalPlan is a plan under a measured spread of wrong answers, at the
// mean p (no difficulty spread). Spread errors make the right answer
// likelier to win than one rival does, but at small k and moderate p a
// race can take longer: the leader must be k ahead of every rival.
type RivalPlan struct {
	Rivals         vote.Rivals `json:"rivals"`
	PFull          float64     `json:"p_full"`
	SamplesPerStep float64     `json:"samples_per_step"`
}

// intervalName is Report.Interval.
const intervalName = "beta-binomial profile likelihood"

// sample is what Run keeps of one drawn sample.
type sample struct {
	member  int
	err     bool
	flag    string
	key     uint64
	correct bool
	usage   vote.Usage
	cost    float64
	inCost  float64 // the input's share of cost, cached tokens at their price
}

// Run calibrates: it draws StepsSampled distinct steps of the task at
// random (seeded by Seed), builds each on its own in its true state
// (Steps.Step), asks the Solver's model Samples times on each (Parallel
// calls at most in flight, each sample identified by its step and index,
// so the simulated model answers as it would in a run), judges every
// reply as the run would, and estimates p, the red-flag rates, how often
// wrong answers repeat, k_min for the whole task at Target, and the
// expected samples and cost per step: over all samples and per model.
//
// A failed model call is counted (Estimate.Errors), not an error of Run.
// With a Budget on the Solver, every sample's call is reserved against
// it as a run's are (Solver.Draw): the first call it refuses stops the
// calibration, no sample starts after it, and Run returns ErrBudget
// (wrapping the *maker.BudgetError) with the dollars spent, which never
// pass the cap for a provider that bills no more than a call's worst
// case. Errors: ErrConfig (wrapped, naming the field); ErrStep wrapping the
// task's error; ErrNoVotes with the Report when no sample was valid;
// ctx.Err() when ctx ends. Deterministic for a deterministic model: the
// Report depends on the samples, never on their schedule. Cost:
// StepsSampled × Samples model calls.
func Run(ctx context.Context, cfg Config) (Report, error) {
	start := time.Now()
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Report{}, err
	}
	total := cfg.Steps.Total()
	if total < 1 {
		return Report{}, fmt.Errorf("%w: the task has %d steps", ErrConfig, total)
	}
	rep := Report{
		Total: total, Sampled: pick(total, cfg.StepsSampled, cfg.Seed), SamplesEach: cfg.Samples,
		Target: cfg.Target, Confidence: cfg.Confidence, Interval: intervalName,
	}
	s := cfg.Solver
	steps := make([]Step, len(rep.Sampled))
	keys := make([]uint64, len(rep.Sampled))
	for j, i := range rep.Sampled {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		st, err := cfg.Steps.Step(ctx, i)
		if err != nil {
			return rep, fmt.Errorf("%w: step %d: %w", ErrStep, i, err)
		}
		if s.Structured && len(st.Schema) == 0 {
			return rep, fmt.Errorf("%w: the Solver is Structured and step %d has no answer schema", ErrConfig, i)
		}
		if keys[j], err = s.Key(st.Correct); err != nil {
			return rep, fmt.Errorf("%w: step %d: its correct answer has no vote key: %w", ErrStep, i, err)
		}
		steps[j] = st
	}

	ms := []llms.Model{s.Model}
	if e, ok := s.Model.(*maker.Ensemble); ok {
		ms = e.Members()
	}
	prices := make([]maker.Price, len(ms))
	rep.Models = make([]ModelEstimate, len(ms))
	for m, model := range ms {
		prices[m] = s.Price
		if p, ok := model.(maker.Priced); ok {
			prices[m] = p.Price()
		}
		rep.Models[m].Model, rep.Models[m].Price = maker.ModelIdentity(model), prices[m]
	}

	drawn := make([][]sample, len(steps))
	for j := range drawn {
		drawn[j] = make([]sample, cfg.Samples)
	}
	n := len(steps) * cfg.Samples
	// Parallel workers take the samples in order from a shared counter:
	// each keeps its goroutine (and grown stack) for many calls.
	var next, done atomic.Int64
	// capped is the first sample the Solver's Budget refused: no sample
	// starts after it, and those in flight finish (they are paid for).
	var capped atomic.Pointer[error]
	g, gctx := errgroup.WithContext(ctx)
	for range min(cfg.Parallel, n) {
		g.Go(func() error {
			for capped.Load() == nil {
				t := int(next.Add(1) - 1)
				if t >= n {
					return nil
				}
				j, idx := t/cfg.Samples, t%cfg.Samples
				dctx := gctx
				if s.Structured {
					dctx = maker.WithAnswerSchema(gctx, steps[j].Schema)
				}
				d, err := s.Draw(dctx, maker.SampleID{Step: rep.Sampled[j], Index: idx}, steps[j].Messages, steps[j].Decode)
				if err != nil {
					return err
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				if errors.Is(d.Err, maker.ErrBudget) {
					capped.CompareAndSwap(nil, &d.Err)
					return nil
				}
				sm := sample{member: d.Member, err: d.Err != nil, usage: d.Usage, key: d.Key}
				if d.Flag != nil {
					sm.flag = d.Flag.Error()
				}
				sm.correct = !sm.err && sm.flag == "" && d.Key == keys[j]
				if !sm.err {
					sm.cost = prices[d.Member].Cost(d.Usage)
					in := d.Usage
					in.OutputTokens = 0
					sm.inCost = prices[d.Member].Cost(in)
				}
				drawn[j][idx] = sm
				if d := int(done.Add(1)); cfg.Progress != nil {
					cfg.Progress(d, n)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return rep, cerr
		}
		return rep, err
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if err := capped.Load(); err != nil {
		return rep, capStop(*err, int(done.Load()), n, s.Budget)
	}

	rep.All = estimate(drawn, func(sample) bool { return true }, cfg, total)
	for m := range rep.Models {
		if len(rep.Models) == 1 { // one model: its samples are all of them
			rep.Models[m].Estimate = rep.All
			continue
		}
		rep.Models[m].Estimate = estimate(drawn, func(x sample) bool { return x.member == m }, cfg, total)
	}
	rep.Wall = time.Since(start)
	if rep.All.Valid == 0 {
		return rep, fmt.Errorf("%w: %d samples: %d red-flagged, %d failed", ErrNoVotes, rep.All.Samples, rep.All.Flagged, rep.All.Errors)
	}
	return rep, nil
}

// pick returns n distinct steps of [0, total), chosen uniformly with the
// seed (Floyd's algorithm), in increasing order; all of them when n >=
// total.
func pick(total, n int, seed uint64) []int {
	if n >= total {
		out := make([]int, total)
		for i := range out {
			out[i] = i
		}
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x63616c6962726174)) // "calibrat"
	chosen := make(map[int]bool, n)
	for j := total - n; j < total; j++ {
		t := rng.IntN(j + 1)
		if chosen[t] {
			t = j
		}
		chosen[t] = true
	}
	return slices.Sorted(maps.Keys(chosen))
}

// estimate summarizes the samples that keep selects.
func estimate(drawn [][]sample, keep func(sample) bool, cfg Config, total int) Estimate {
	e := Estimate{Flags: map[string]int{}}
	clusters := make([]cluster, 0, len(drawn))
	var in, out, cost, inCost, cached float64
	var topSum, topOf int
	for _, step := range drawn {
		var c cluster
		wrong := map[uint64]int{}
		for _, x := range step {
			if !keep(x) {
				continue
			}
			e.Samples++
			switch {
			case x.err:
				e.Errors++
				continue
			case x.flag != "":
				e.Flagged++
				e.Flags[x.flag]++
			case x.correct:
				e.Valid++
				e.Correct++
				c.n++
				c.x++
			default:
				e.Valid++
				e.Wrong++
				c.n++
				wrong[x.key]++
			}
			in += float64(x.usage.InputTokens)
			out += float64(x.usage.OutputTokens)
			cost += x.cost
			inCost += x.inCost
			cached += float64(x.usage.CachedInputTokens)
		}
		clusters = append(clusters, c)
		w, top := 0, 0
		if c.n > 0 {
			for _, v := range wrong {
				if float64(v) > c.x {
					e.HardSteps++
					break
				}
			}
		}
		for _, v := range wrong {
			w += v
			top = max(top, v)
			e.Repeat.Same += v * (v - 1) / 2
		}
		e.Repeat.Pairs += w * (w - 1) / 2
		if w >= 2 {
			topSum += top
			topOf += w
		}
	}
	if e.Repeat.Pairs > 0 {
		e.Repeat.Rate = float64(e.Repeat.Same) / float64(e.Repeat.Pairs)
	}
	if topOf > 0 {
		e.Repeat.TopShare = float64(topSum) / float64(topOf)
	}
	if answered := e.Valid + e.Flagged; answered > 0 {
		e.ValidRate = float64(e.Valid) / float64(answered)
		e.InputTokens, e.OutputTokens = in/float64(answered), out/float64(answered)
		e.CostPerSample = cost / float64(answered)
		e.InputCostPerSample = inCost / float64(answered)
		if in > 0 {
			e.CachedShare = cached / in
		}
	}
	e.SamplesPerCall = cfg.SamplesPerCall
	if e.Valid == 0 {
		e.Low, e.High, e.DesignEffect = 0, 1, 1
		e.NoK = "no valid sample"
		return e
	}
	e.P = float64(e.Correct) / float64(e.Valid)
	if r := e.Repeat; cfg.WithRivals && r.Pairs >= fewPairs && r.Rate > 0 && r.Rate < correlated {
		e.Rivals = &vote.Rivals{N: min(vote.MaxRivals, int(math.Round(1/r.Rate)))}
	}
	e.DesignEffect = designEffect(clusters, e.P)
	withVotes := 0
	for _, c := range clusters {
		if c.n > 0 {
			withVotes++
		}
	}
	e.clusters = withVotes
	e.HardShare = float64(e.HardSteps) / float64(withVotes)
	sp, lo, hi := fitSpread(clusters, cfg.Confidence)
	e.Spread, e.Low, e.High = &sp, lo, hi
	e.plan(cfg, total)
	return e
}

// plan sets KMin, KMinPoint, Plan and AtK from the estimate: the
// whole run's success averaged over the fitted spread (Spread.pFull).
func (e *Estimate) plan(cfg Config, total int) {
	at := func(mean float64) Spread { return Spread{Mean: mean, ICC: e.Spread.ICC} }
	e.KMinPoint = at(e.P).kMin(total, cfg.Target)
	low := at(e.Low)
	e.KMin = low.kMin(total, cfg.Target)
	switch {
	case e.KMin > 0:
		p := e.PlanAt(e.KMin, total)
		e.Plan = &p
	case e.Low <= 0.5:
		e.Unreachable = true
		e.NoK = fmt.Sprintf("no k reaches %g: the lower bound on p, %.4f, is not above 1/2, so voting does not converge on the right answer; use a stronger model, an ensemble or escalation, or sample more steps", cfg.Target, e.Low)
	default:
		e.Unreachable = true
		hard := math.Max(low.hardShare(), e.HardShare)
		e.NoK = fmt.Sprintf("no k reaches %g: about %.2g%% of steps are hard for this model (%d of %d sampled steps had a wrong majority; the fitted spread puts %.2g%% of steps below p = 1/2), and a hard step whose errors agree is decided wrong more surely as k grows; use a stronger model, an ensemble or escalation",
			cfg.Target, 100*hard, e.HardSteps, e.clusters, 100*low.hardShare())
	}
	if cfg.K > 0 {
		p := e.PlanAt(cfg.K, total)
		e.AtK = &p
	}
}

// PlanAt is the run of steps steps at margin k: its success averaged
// over this estimate's Spread (with its mean at P, and at Low), its
// samples and cost by the scaling laws at P and Low with ValidRate and
// CostPerSample. Figures the laws leave undefined (a valid rate of 0)
// are 0.
func (e Estimate) PlanAt(k, steps int) Plan {
	icc := 0.0
	if e.Spread != nil {
		icc = e.Spread.ICC
	}
	p := Plan{K: k, PFull: Spread{Mean: e.P, ICC: icc}.pFull(steps, k), PFullLow: Spread{Mean: e.Low, ICC: icc}.pFull(steps, k)}
	if e.ValidRate > 0 {
		p.SamplesPerStep = vote.ExpectedSamples(e.P, k) / e.ValidRate
		p.SamplesPerStepLow = vote.ExpectedSamples(e.Low, k) / e.ValidRate
	}
	for _, f := range []*float64{&p.PFull, &p.PFullLow, &p.SamplesPerStep, &p.SamplesPerStepLow} {
		if math.IsNaN(*f) {
			*f = 0
		}
	}
	p.Samples = p.SamplesPerStep * float64(steps)
	perCall := e.SamplesPerCall
	if perCall == maker.SamplesPerCallAuto {
		perCall = k
	}
	requests := func(samples float64) float64 {
		if perCall <= 1 || samples <= 0 {
			return samples
		}
		return max(1, samples/float64(perCall))
	}
	outCost := e.CostPerSample - e.InputCostPerSample
	p.RequestsPerStep = requests(p.SamplesPerStep)
	p.CostPerStep = p.RequestsPerStep*e.InputCostPerSample + p.SamplesPerStep*outCost
	p.Cost = p.CostPerStep * float64(steps)
	p.CostLow = (requests(p.SamplesPerStepLow)*e.InputCostPerSample + p.SamplesPerStepLow*outCost) * float64(steps)
	if e.Rivals != nil && e.ValidRate > 0 {
		ps, err1 := vote.PStepWith(e.P, k, *e.Rivals)
		n, err2 := vote.ExpectedSamplesWith(e.P, k, *e.Rivals)
		// vote.PStepWith can return NaN without an error (seen at p = 0.9,
		// k = 10, 8 rivals): such a plan is left out.
		if err1 == nil && err2 == nil && !math.IsNaN(ps) && !math.IsNaN(n) {
			p.WithRivals = &RivalPlan{Rivals: *e.Rivals, PFull: math.Exp(float64(steps) * math.Log1p(-(1 - ps))), SamplesPerStep: n / e.ValidRate}
		}
	}
	return p
}

// String renders the report for a terminal: per model, then for the
// ensemble as a whole when there are several.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "calibrated %d of %d steps, %d samples each (%d samples) in %s\n",
		len(r.Sampled), r.Total, r.SamplesEach, len(r.Sampled)*r.SamplesEach, r.Wall.Round(time.Millisecond))
	for _, m := range r.Models {
		fmt.Fprintf(&b, "model %s:\n", m.Model)
		m.Estimate.write(&b, r)
	}
	if len(r.Models) > 1 {
		b.WriteString("the ensemble, samples to each model in turn:\n")
		r.All.write(&b, r)
	}
	return b.String()
}

func (e Estimate) write(b *strings.Builder, r Report) {
	pct := func(x float64) string { return fmt.Sprintf("%.3g%%", 100*x) }
	if e.Valid > 0 {
		fmt.Fprintf(b, "  p = %.5f, %g%% interval [%.5f, %.5f] on the mean per-step p (%d of %d valid samples right; steps as clusters: beta-binomial profile likelihood; design effect %.2f)\n",
			e.P, 100*r.Confidence, e.Low, e.High, e.Correct, e.Valid, e.DesignEffect)
		if sp := e.Spread; sp != nil {
			fmt.Fprintf(b, "  steps differ: intra-step correlation %.3g (0: every step alike); the plans average the run's success over that spread\n", sp.ICC)
		}
		fmt.Fprintf(b, "  hard steps: %d of %d sampled steps (%.3g%%) had a wrong majority answer (fitted: %.3g%% of steps below p = 1/2); a hard step whose errors agree is decided wrong at any k\n",
			e.HardSteps, e.clusters, 100*e.HardShare, 100*e.Spread.hardShare())
	} else {
		fmt.Fprintf(b, "  p unknown: no valid sample of %d\n", e.Samples)
	}
	answered := e.Valid + e.Flagged
	if e.Flagged > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(e.Flags)) {
			parts = append(parts, fmt.Sprintf("%s %s", k, pct(float64(e.Flags[k])/float64(answered))))
		}
		fmt.Fprintf(b, "  red flags: %s of replies (%s)\n", pct(float64(e.Flagged)/float64(answered)), strings.Join(parts, ", "))
	} else {
		b.WriteString("  red flags: none\n")
	}
	if e.Errors > 0 {
		fmt.Fprintf(b, "  provider errors: %d of %d calls\n", e.Errors, e.Samples)
	}
	fmt.Fprintf(b, "  wrong answers repeat: %s\n", e.Repeat.sentence())
	switch {
	case e.KMin > 0:
		fmt.Fprintf(b, "  k_min %d for %d steps at target %g (at the interval's lower bound %.5f; %d at p = %.5f)\n",
			e.KMin, r.Total, r.Target, e.Low, e.KMinPoint, e.P)
		e.Plan.write(b)
	case e.NoK != "":
		fmt.Fprintf(b, "  k_min: none: %s\n", e.NoK)
	}
	if e.AtK != nil {
		fmt.Fprintf(b, "  at k = %d:\n", e.AtK.K)
		e.AtK.write(b)
	}
	if e.CostPerSample > 0 {
		fmt.Fprintf(b, "  cost per sample $%.6f (%.0f tokens in, %.0f out)\n", e.CostPerSample, e.InputTokens, e.OutputTokens)
		fmt.Fprintf(b, "  the forecast bills %s, and %.3g%% of the prompt's tokens at the cached-input price (the cached share the provider reported here)\n", e.promptBilling(), 100*e.CachedShare)
	} else {
		fmt.Fprintf(b, "  tokens per sample: %.0f in, %.0f out (no price given: costs are 0)\n", e.InputTokens, e.OutputTokens)
	}
}

// promptBilling says how the plans bill the prompt.
func (e Estimate) promptBilling() string {
	switch {
	case e.SamplesPerCall == maker.SamplesPerCallAuto:
		return "the prompt once a request of k samples (--samples-per-call auto, assumed full requests)"
	case e.SamplesPerCall > 1:
		return fmt.Sprintf("the prompt once a request of %d samples (--samples-per-call %d, assumed full requests)", e.SamplesPerCall, e.SamplesPerCall)
	}
	return "the prompt once a sample (one request per sample)"
}

func (p *Plan) write(b *strings.Builder) {
	fmt.Fprintf(b, "    p_full %.6f (%.6f at the lower bound); expected %.3f samples per step (%.3f at the lower bound), %.0f in all",
		p.PFull, p.PFullLow, p.SamplesPerStep, p.SamplesPerStepLow, p.Samples)
	if p.Cost > 0 {
		fmt.Fprintf(b, "; %.3f requests per step, $%.4g per step, $%.2f in all ($%.2f at the lower bound)", p.RequestsPerStep, p.CostPerStep, p.Cost, p.CostLow)
	}
	b.WriteString("\n")
	if r := p.WithRivals; r != nil {
		fmt.Fprintf(b, "    with the errors spread as measured (%d rivals): p_full %.6f, %.3f samples per step\n", r.Rivals.N, r.PFull, r.SamplesPerStep)
	}
}

// correlated is the repeat rate from which wrong answers are said to be
// correlated: two wrong answers to a step agree at least half the time,
// so the most common wrong answer is the one rival that matters.
const correlated = 0.5

// fewPairs is the number of pairs below which the repeat rate is called
// weak evidence.
const fewPairs = 10

// sentence says what Repeat means for the plan.
func (r Repeat) sentence() string {
	if r.Pairs == 0 {
		return "unknown: no sampled step had two wrong answers to compare (sample more per step: --samples)"
	}
	var s string
	if r.Rate >= correlated {
		s = fmt.Sprintf("%.0f%% of pairs of wrong answers to one step are the same answer (%s; the most common wrong answer is %.0f%% of them) — correlated errors; k_min assumes one rival, which is then exact for the wrong-winner rate",
			100*r.Rate, pairs(r.Pairs), 100*r.TopShare)
	} else {
		rivals := "no two agreed"
		if r.Rate > 0 {
			rivals = fmt.Sprintf("about %.1f rival answers", 1/r.Rate)
		}
		s = fmt.Sprintf("%.0f%% of pairs of wrong answers to one step are the same answer (%s: %s) — errors spread; k_min assumes one rival, the worst case for how often a wrong answer wins (not for cost: spread errors can make a race longer at small k), and spread errors do not help a hard step whose errors agree",
			100*r.Rate, pairs(r.Pairs), rivals)
	}
	if r.Pairs < fewPairs {
		s += "; few pairs, weak evidence (sample more per step: --samples)"
	}
	return s
}

func pairs(n int) string {
	if n == 1 {
		return "1 pair"
	}
	return fmt.Sprintf("%d pairs", n)
}

// budgetStop is the error of a calibration its Budget stopped: it wraps
// ErrBudget and the refused call's error (a *maker.BudgetError, which
// wraps maker.ErrBudget).
type budgetStop struct {
	msg   string
	cause error
}

func (e *budgetStop) Error() string   { return e.msg }
func (e *budgetStop) Unwrap() []error { return []error{ErrBudget, e.cause} }

// capStop words the stop of a calibration after done of n samples, when
// the budget refused a call (cause).
func capStop(cause error, done, n int, b *maker.Budget) error {
	worst := ""
	var be *maker.BudgetError
	if errors.As(cause, &be) {
		worst = fmt.Sprintf(": the next call's worst case, $%.6f (its prompt and a reply of the whole reply cap), would pass it", be.Worst)
	}
	return &budgetStop{cause: cause, msg: fmt.Sprintf("%v: calibration stopped at its spending cap after %d of %d samples, $%.6f spent of $%.6f%s; give a larger cap, or fewer steps sampled or samples",
		ErrBudget, done, n, b.Spent(), b.Cap, worst)}
}
