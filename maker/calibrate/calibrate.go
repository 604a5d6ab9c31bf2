package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/budget"
	"github.com/mdap-go/mdap/vote"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/mdap-go/mdap/vote/rivals"
	"github.com/tmc/langchaingo/llms"
	"golang.org/x/sync/errgroup"
)

// Errors, for errors.Is.
var (
	// ErrConfig: a Config field is out of range, or the task cannot be
	// calibrated (a spec without a script, ...). The message names it.
	ErrConfig = fielderr.ErrConfig
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
	// DefaultMaxSamples is Config.MaxSamples's default.
	DefaultMaxSamples = 200_000
)

// DefaultConfig is a Config with its defaults written out (the values its
// zero fields read as) and Seed 1, for a caller that shows them: maker
// calibrate's flags. It has no Steps or Solver yet.
func DefaultConfig() Config {
	return Config{StepsSampled: DefaultStepsSampled, Samples: DefaultSamples, Seed: 1, Target: DefaultTarget,
		Confidence: DefaultConfidence, Parallel: DefaultParallel, MaxSamples: DefaultMaxSamples}
}

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
	// Observer, Budget, Executor and SamplesPerCall draw and judge each
	// sample exactly as its races would (maker.Sampler: the run's own
	// sample agent, a step's samples sent in the requests a run's wave of
	// them is), and Price
	// prices it (a member that is maker.Priced at its own price). Its
	// Vote, Journal and the rest are not used. Required, with a Model.
	Solver *maker.Solver
	// StepsSampled is how many distinct steps are drawn, uniformly from
	// the task's Total (all of them if Total is smaller). Default
	// DefaultStepsSampled.
	StepsSampled int `flag:"steps-sampled" usage:"number of distinct steps sampled at random (all of them if the task has fewer)"`
	// Samples is how many samples each sampled step gets (sample indices
	// 0..Samples-1, so the temperature schedule is the run's). Default
	// DefaultSamples.
	Samples int `flag:"samples" usage:"samples per sampled step"`
	// Seed chooses the sampled steps: the same seed, the same steps.
	Seed uint64 `flag:"steps-seed" usage:"seed of the choice of steps (the same seed, the same steps)"`
	// Target is the probability that the whole run succeeds, in (0, 1),
	// that k_min is planned for. Default DefaultTarget.
	Target float64
	// Confidence is the two-sided confidence of the interval on p, and
	// the confidence of the joint region of (mean p, spread) that k is
	// planned over, in (0, 1). Default DefaultConfidence.
	Confidence float64 `flag:"confidence" usage:"confidence of the interval on p, in (0, 1)"`
	// K, if set, adds the plan at this margin (Estimate.AtK): what the
	// k you had in mind would give.
	K int
	// WithRivals adds to each plan the same run with the wrong answers
	// spread as measured (Plan.WithRivals), by the laws with rivals. They
	// are exact but costly: a dynamic program of up to
	// rivals.MaxWork state updates per plan, seconds at k >= 6 with
	// several rivals.
	WithRivals bool `flag:"with-rivals" usage:"also plan with the wrong answers spread as measured (exact laws with rivals; can take seconds)"`
	// Parallel is the most samples in flight at once. Default
	// DefaultParallel.
	Parallel int `flag:"concurrency" usage:"model calls in flight at once"`
	// SamplesPerCall is the run's samples per provider request
	// (maker.Solver.SamplesPerCall, --samples-per-call): the plans' costs
	// bill the prompt once a request (see Plan.RequestsPerStep). 0 or 1:
	// one request per sample; maker.SamplesPerCallAuto: k samples a
	// request. Calibration itself sends its samples as the Solver's
	// SamplesPerCall says (give both the same value).
	SamplesPerCall int
	// Progress, if set, is called after each sample with the samples
	// done and the total of its round, from the goroutine that drew it:
	// concurrently, so it must be safe for concurrent use, and quick.
	Progress func(done, total int)
	// UntilDecided: while the plan is undecided (Estimate.Undecided),
	// sample more, as the forecast says (Estimate.MoreSteps): new steps
	// while the task has steps not yet sampled, then more samples of each
	// sampled step; look again; stop when decided, before a round whose
	// samples would pass MaxSamples or whose forecast cost would pass
	// MaxCost, or when the Solver's Budget refuses a call of a round (its
	// samples are then not counted, and the report stands at the look
	// before it); Report.Stopped says which. A round takes the forecast's
	// samples, but at least a quarter of those drawn so far and at most as
	// many again; when the forecast names no number (MoreSteps -1), as
	// many again. Look j plans over a region at
	// confidence 1 - (1-Confidence)/(j(j+1)), so the looks together keep the
	// error within 1 - Confidence. Cost: up to MaxSamples model calls.
	UntilDecided bool `flag:"until-decided" usage:"while the plan is undecided, sample more (new steps, then more samples per step) in rounds, each forecast on stderr before it draws, until it is decided or a cap stops it (--until-max-samples, and --max-cost in dollars); each look plans over a stricter region so that all of them keep --confidence"`
	// MaxSamples caps UntilDecided's samples in all (the first round's
	// included). Default DefaultMaxSamples.
	MaxSamples int `flag:"until-max-samples" usage:"with --until-decided: the most samples drawn in all, the first round's included"`
	// MaxCost caps UntilDecided's dollars: a round whose forecast (its
	// samples at the cost per sample measured so far) would take the
	// spending past it is not started. 0: no dollar cap.
	MaxCost float64
	// Forecast, if set, is called with each UntilDecided round before it
	// draws anything (and before the caps are checked), from Run's
	// goroutine.
	Forecast func(Round)
	// NoPlan estimates p, its interval, the spread's fit and the counts
	// only: no k_min, no region, no plans (KMin, Plan and the rest are
	// zero, NoK says so). For callers that need p alone: the region and
	// its forecast cost up to a second of computing per estimate. It
	// cannot go with UntilDecided or K.
	NoPlan bool

	look int // the look being estimated (UntilDecided)
}

// regionLevel is the confidence of the region k is planned over: the
// Confidence, or with UntilDecided the stricter level of its look.
func (c Config) regionLevel() float64 {
	if !c.UntilDecided {
		return c.Confidence
	}
	return c.lookLevel(max(1, c.look))
}

// lookLevel is the region's confidence at look j of UntilDecided: 1 -
// (1-Confidence)/(j(j+1)), so that the chances of a wrong region over all
// the looks add up to less than 1 - Confidence (a Bonferroni spending:
// each look may stop the sampling, and a stop on a wrong region is the
// error to bound; 1/(j(j+1)) sums to 1).
func (c Config) lookLevel(j int) float64 {
	return 1 - (1-c.Confidence)/float64(j*(j+1))
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Steps == nil:
		return c, fmt.Errorf("%w: no Steps", ErrConfig)
	case c.Solver == nil || c.Solver.Model == nil:
		return c, fmt.Errorf("%w: no Solver with a Model", ErrConfig)
	}
	return c.settings()
}

// Validate checks c's settings as Run takes them (a zero field is its
// default) and returns nil or a *maker.FieldError (wrapping ErrConfig)
// naming the first refused field, its value and the fix: StepsSampled,
// Samples, Parallel or MaxSamples outside their bounds, StepsSampled
// times Samples above MaxDraws, with UntilDecided and Steps set a
// MaxSamples below the first round's samples (min(StepsSampled,
// Steps.Total()) times Samples: all of a smaller task's steps), Target
// or Confidence outside (0, 1), a negative K, a SamplesPerCall outside
// maker's, NoPlan with UntilDecided or K, a negative or infinite MaxCost.
// Steps and Solver are not checked: Run refuses them missing (and checks
// the first round with the Steps it is given). A command maps the field
// names to its flags (maker calibrate does). Cost: O(1) and one call of
// Steps.Total.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

// settings is c with its defaults, or Validate's error.
func (c Config) settings() (Config, error) {
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
	if c.MaxSamples == 0 {
		c.MaxSamples = DefaultMaxSamples
	}
	bad := func(name string, v any, fix string) (Config, error) {
		return c, fielderr.New("calibrate.Config", name, v, fix)
	}
	switch {
	case c.StepsSampled < 1 || c.StepsSampled > MaxStepsSampled:
		return bad("StepsSampled", c.StepsSampled, fmt.Sprintf("use 1 to %d", MaxStepsSampled))
	case c.Samples < 1 || c.Samples > MaxSamples:
		return bad("Samples", c.Samples, fmt.Sprintf("use 1 to %d", MaxSamples))
	case c.StepsSampled*c.Samples > MaxDraws:
		return c, &fielderr.Error{Config: "calibrate.Config", Fields: []fielderr.Field{{Name: "StepsSampled", Value: c.StepsSampled}, {Name: "Samples", Value: c.Samples}},
			Fix: fmt.Sprintf("at most %d samples in all (the one times the other)", MaxDraws)}
	case !(c.Target > 0 && c.Target < 1):
		return bad("Target", c.Target, "use a probability above 0 and below 1, such as 0.95")
	case !(c.Confidence > 0 && c.Confidence < 1):
		return bad("Confidence", c.Confidence, "use a probability above 0 and below 1, such as 0.95")
	case c.K < 0:
		return bad("K", c.K, "use 0 (none) or a margin")
	case c.SamplesPerCall < maker.SamplesPerCallAuto || c.SamplesPerCall > maker.MaxSamplesPerCall:
		return bad("SamplesPerCall", c.SamplesPerCall, fmt.Sprintf("use maker.SamplesPerCallAuto, or 0 to %d", maker.MaxSamplesPerCall))
	case c.NoPlan && (c.UntilDecided || c.K > 0):
		return bad("NoPlan", c.NoPlan, "not with UntilDecided or K: both need the plan")
	case c.MaxSamples < 1 || c.MaxSamples > MaxDraws:
		return bad("MaxSamples", c.MaxSamples, fmt.Sprintf("use 1 to %d", MaxDraws))
	case c.UntilDecided && c.MaxSamples < c.firstRound():
		return bad("MaxSamples", c.MaxSamples, fmt.Sprintf("below the first round's %d samples (%s): raise it", c.firstRound(), c.firstRoundIs()))
	case !(c.MaxCost >= 0) || math.IsInf(c.MaxCost, 0):
		return bad("MaxCost", c.MaxCost, "use 0 (no cap) or a number of dollars")
	case c.Parallel < 1 || c.Parallel > MaxParallel:
		return bad("Parallel", c.Parallel, fmt.Sprintf("use 1 to %d", MaxParallel))
	}
	return c, nil
}

// firstRound is the number of samples of UntilDecided's first round:
// StepsSampled steps, or all of a smaller task's (none known without
// Steps: then 0, as the rule cannot be checked).
func (c Config) firstRound() int {
	if c.Steps == nil {
		return 0
	}
	return min(c.StepsSampled, max(c.Steps.Total(), 0)) * c.Samples
}

// firstRoundIs says what firstRound counts, in field names.
func (c Config) firstRoundIs() string {
	if c.Steps != nil && c.Steps.Total() < c.StepsSampled {
		return fmt.Sprintf("the task's %d steps times Samples", c.Steps.Total())
	}
	return "StepsSampled times Samples"
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
	// Look is the number of estimates made (1 without UntilDecided);
	// RegionConfidence the confidence of the last one's region.
	Look             int     `json:"look"`
	RegionConfidence float64 `json:"region_confidence"`
	// Rounds are UntilDecided's rounds, each as forecast (the last one
	// perhaps not drawn: see Stopped).
	Rounds []Round `json:"rounds,omitempty"`
	// Stopped says why UntilDecided stopped while still undecided.
	Stopped string `json:"stopped,omitempty"`
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
	Rivals *rivals.Spread `json:"rivals,omitempty"`
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
	// probability at least Target at every point of the joint confidence
	// region (at Config.Confidence, likelihood ratio, χ² with 2 degrees
	// of freedom) of the mean per-step p and the spread's ICC, the run's
	// success averaged over the Beta distribution of per-step p at each
	// point (each step's errors to one rival): the margin to run with.
	// A spread the samples cannot detect is not taken as none: the
	// region's larger ICCs with its lower means put a tail of hard steps
	// under the run. 0 when there is none (see NoK, Undecided,
	// Unreachable); in JSON then null. KBest is the smallest margin that
	// reaches Target somewhere in the region (0 if none): the most
	// hopeful reading. KMinPoint is the same at the fit alone (an
	// estimate, not a recommendation).
	KMin  int `json:"k_min"`
	KBest int `json:"k_min_best"`
	// KSafe is the smallest margin that reaches Target over the whole
	// region, whether or not it is recommended: an undecided plan whose
	// ks are far apart (KSafe more than twice KBest) has one, a costly
	// but safe choice. 0 when none.
	KSafe     int `json:"k_safe"`
	KMinPoint int `json:"k_min_at_p"`
	// EveryStep: every step of the task was sampled in the first round
	// (StepsSampled at least Total, each step with a valid sample), so k
	// is planned on
	// each step's own bounds on p (Clopper-Pearson, one-sided, at
	// 1 - (1-Confidence)/Total each, so that all hold at once), not over
	// a model of the steps' spread; MoreSteps then counts more samples
	// in steps' worth (MoreSteps/Total more samples of each step per
	// sample it has).
	EveryStep bool `json:"every_step_sampled,omitempty"`
	// ICCLow and ICCHigh are the least and largest ICC in the region (0
	// with EveryStep).
	ICCLow  float64 `json:"icc_low"`
	ICCHigh float64 `json:"icc_high"`
	// NoK says why there is no KMin, when there is none, and what helps.
	NoK string `json:"no_k,omitempty"`
	// Unreachable: no k reaches Target anywhere in the region, because of
	// the hard steps (or a mean p at or below 1/2); maker calibrate then
	// exits 1.
	Unreachable bool `json:"unreachable,omitempty"`
	// Undecided: the region holds both points where a k reaches Target
	// and points where none does, so the samples cannot tell; maker
	// calibrate then exits 1. MoreSteps is the forecast of how many more
	// sampled steps would decide it if they looked like these (-1: not
	// within MaxStepsSampled); Config.UntilDecided samples them.
	Undecided bool `json:"undecided,omitempty"`
	MoreSteps int  `json:"more_steps,omitempty"`
	// worst is the region's largest per-step failure at each margin
	// 1..kSearch (PlanAt's PFullBound).
	worst []float64
	// Plan is the run at KMin; AtK the run at Config.K, if set.
	Plan *Plan `json:"plan,omitempty"`
	AtK  *Plan `json:"at_k,omitempty"`
}

// MarshalJSON writes the estimate with k_min null when there is no
// recommendation (KMin 0: undecided, unreachable, or no valid sample).
func (e Estimate) MarshalJSON() ([]byte, error) {
	type plain Estimate // without this method
	return json.Marshal(struct {
		plain
		KMin *int `json:"k_min"`
	}{plain(e), kMinJSON(e.KMin)})
}

// MarshalJSON writes the model's estimate as Estimate.MarshalJSON does
// (without it, the embedded Estimate's would drop Model and Price).
func (m ModelEstimate) MarshalJSON() ([]byte, error) {
	type plain Estimate
	return json.Marshal(struct {
		Model string      `json:"model"`
		Price maker.Price `json:"price"`
		plain
		KMin *int `json:"k_min"`
	}{m.Model, m.Price, plain(m.Estimate), kMinJSON(m.KMin)})
}

func kMinJSON(k int) *int {
	if k <= 0 {
		return nil
	}
	return &k
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
	// fitted spread (the maximum-likelihood mean and ICC): an estimate,
	// not a bound. PFullBound is the least such probability over the
	// joint confidence region of mean and ICC (Estimate.ICCHigh): the
	// bound that holds, at the region's confidence, if per-step p follows
	// a Beta distribution and each step's errors go to one rival answer
	// (0 when the estimate has no region, as without valid samples).
	PFull      float64 `json:"p_full"`
	PFullBound float64 `json:"p_full_bound"`
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
	// (rivals.PStep, rivals.ExpectedSamples); nil without a measured
	// spread, or when the laws would cost too much to compute.
	WithRivals *RivalPlan `json:"with_rivals,omitempty"`
}

// RivalPlan is a plan under a measured spread of wrong answers, at the
// mean p (no difficulty spread). Spread errors make the right answer
// likelier to win than one rival does, but at small k and moderate p a
// race can take longer: the leader must be k ahead of every rival.
type RivalPlan struct {
	Rivals         rivals.Spread `json:"rivals"`
	PFull          float64       `json:"p_full"`
	SamplesPerStep float64       `json:"samples_per_step"`
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
	// cost is the sample's price as a request of its own (its prompt
	// and output), inCost the prompt's share of it (cached tokens at
	// their price): what the plans bill by. paid is what the sample
	// cost here (its share of its request's prompt: none but for the
	// sample that made the request).
	cost, inCost, paid float64
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
// it as a run's are (maker.Sampler): the first call it refuses stops the
// calibration, no sample starts after it, and Run returns ErrBudget
// (wrapping the *budget.Error) with the dollars spent, which never
// pass the cap for a provider that bills no more than a call's worst
// case. Errors: ErrConfig (wrapped, naming the field); ErrStep wrapping the
// task's error; ErrNoVotes with the Report when no sample was valid;
// ctx.Err() when ctx ends. Deterministic for a deterministic model: the
// Report depends on the samples, never on their schedule. Cost:
// StepsSampled × Samples samples, in as many model calls, or fewer
// with the Solver's SamplesPerCall (the requests a run would send them
// in).
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
	c := newCalibration(cfg, total)
	if c.sampler, err = cfg.Solver.NewSampler(); err != nil {
		return Report{}, err
	}
	rep := Report{
		Total: total, SamplesEach: cfg.Samples,
		Target: cfg.Target, Confidence: cfg.Confidence, Interval: intervalName,
		Models: c.models,
	}
	first := pick(total, cfg.StepsSampled, cfg.Seed)
	if err := c.addSteps(ctx, first); err != nil {
		rep.Sampled = c.sampledSorted()
		return rep, err
	}
	if err := c.draw(ctx, c.jobs(0, cfg.Samples)); err != nil {
		rep.Sampled = c.sampledSorted()
		return rep, err
	}
	c.summarize(&rep, start)
	if rep.All.Valid == 0 {
		return rep, fmt.Errorf("%w: %d samples: %d red-flagged, %d failed", ErrNoVotes, rep.All.Samples, rep.All.Flagged, rep.All.Errors)
	}
	if !cfg.UntilDecided {
		return rep, nil
	}
	// The sequential mode: while undecided, forecast, check the caps,
	// sample more, and look again at a stricter level.
	rest := remaining(total, first, cfg.Seed)
	for rep.All.Undecided {
		// The forecast moves as the fit does (a fit at the edge of "a k
		// exists" forecasts a great deal, or never), so a round takes at
		// least a quarter more samples (the looks stay few) and at most as
		// many again as were drawn (an inflated forecast does not spend
		// the cap at once), and never past MaxSamples.
		have := c.samples()
		want := -1
		if rep.All.MoreSteps > 0 {
			want = rep.All.MoreSteps * cfg.Samples
		}
		add := min(have, cfg.MaxSamples-have)
		if want >= 0 {
			add = min(max(want, (have+3)/4), add)
		}
		newSteps := min(len(rest), (add+cfg.Samples-1)/cfg.Samples, (cfg.MaxSamples-have)/cfg.Samples)
		after := len(c.steps) + newSteps
		extraEach := 0
		if left := add - newSteps*cfg.Samples; left > 0 {
			// Once every step is sampled: more samples of each, within the
			// cap.
			extraEach = min((left+after-1)/after, (cfg.MaxSamples-have-newSteps*cfg.Samples)/after)
		}
		r := Round{
			Look: c.look + 1, Forecast: want, NewSteps: newSteps, ExtraSamplesEach: extraEach,
			Samples: newSteps*cfg.Samples + extraEach*after, SamplesSoFar: have,
			SpentSoFar: c.spent(),
		}
		r.Cost = float64(r.Samples) * rep.All.CostPerSample
		r.RegionConfidence = cfg.lookLevel(r.Look)
		rep.Rounds = append(rep.Rounds, r)
		if cfg.Forecast != nil {
			cfg.Forecast(r)
		}
		switch {
		case r.Samples < 1 || r.SamplesSoFar+r.Samples > cfg.MaxSamples:
			wants := "the forecast names no number"
			if want >= 0 {
				wants = fmt.Sprintf("the forecast wants %d more", want)
			}
			rep.Stopped = fmt.Sprintf("the cap of %d samples is reached (%d drawn, %s): raise the cap to go on", cfg.MaxSamples, r.SamplesSoFar, wants)
			return rep, nil
		case cfg.MaxCost > 0 && r.SpentSoFar+r.Cost > cfg.MaxCost:
			rep.Stopped = fmt.Sprintf("the next round's forecast $%.4f would pass the cap of $%.4f ($%.4f spent); raise the cap to go on", r.Cost, cfg.MaxCost, r.SpentSoFar)
			return rep, nil
		}
		before := len(c.steps)
		if err := c.addSteps(ctx, rest[:newSteps]); err != nil {
			return rep, err
		}
		rest = rest[newSteps:]
		c.look++
		err := c.draw(ctx, c.jobs(before, cfg.Samples))
		if err == nil && extraEach > 0 {
			err = c.draw(ctx, c.extra(extraEach))
		}
		if errors.Is(err, ErrBudget) {
			// The Budget reserves each call's worst case, which the
			// forecast (at the mean cost of a sample) does not: a round
			// can still meet the cap. The report stands at the last look;
			// the stopped round's samples are paid for but not counted
			// (a step's samples must stay whole, in index order).
			rep.Stopped = fmt.Sprintf("the spending cap stopped a round: %v; the report stands at look %d, without that round's samples: raise the cap to go on", err, c.look-1)
			return rep, nil
		}
		if err != nil {
			return rep, err
		}
		c.summarize(&rep, start)
	}
	return rep, nil
}

// Round is one round of Config.UntilDecided: the forecast it was planned
// on, given to Config.Forecast before any of its samples is drawn.
type Round struct {
	// Look is the look this round leads to: 2 for the first round after
	// the calibration's own samples.
	Look int `json:"look"`
	// Forecast is the samples that the forecast (Estimate.MoreSteps at
	// Samples each) says would decide the plan; the round takes between
	// a quarter of the samples drawn so far and as many again.
	Forecast int `json:"forecast_samples"`
	// NewSteps is how many steps not yet sampled it draws (Samples each);
	// ExtraSamplesEach how many more samples each sampled step gets once
	// every step of the task is sampled.
	NewSteps         int `json:"new_steps"`
	ExtraSamplesEach int `json:"extra_samples_each,omitempty"`
	// Samples is the round's samples; Cost their forecast price at the
	// cost per sample measured so far.
	Samples int     `json:"samples"`
	Cost    float64 `json:"cost"`
	// SamplesSoFar and SpentSoFar are what was drawn and spent before it.
	SamplesSoFar int     `json:"samples_so_far"`
	SpentSoFar   float64 `json:"spent_so_far"`
	// RegionConfidence is the confidence of the region at its look.
	RegionConfidence float64 `json:"region_confidence"`
}

// calibration is the samples of one Run, which Config.UntilDecided grows
// round by round.
type calibration struct {
	cfg    Config
	total  int
	models []ModelEstimate
	prices []maker.Price
	look   int // 1 for the first estimate
	// sampled, steps and keys are the sampled steps in the order drawn;
	// drawn their samples.
	sampled []int
	steps   []Step
	keys    []uint64
	drawn   [][]sample
	sampler *maker.Sampler // draws a request's samples as the run sends them
}

func newCalibration(cfg Config, total int) *calibration {
	s := cfg.Solver
	ms := []llms.Model{s.Model}
	if e, ok := s.Model.(*maker.Ensemble); ok {
		ms = e.Members()
	}
	c := &calibration{cfg: cfg, total: total, look: 1, prices: make([]maker.Price, len(ms)), models: make([]ModelEstimate, len(ms))}
	for m, model := range ms {
		c.prices[m] = s.Price
		if p, ok := model.(maker.Priced); ok {
			c.prices[m] = p.Price()
		}
		c.models[m].Model, c.models[m].Price = maker.ModelIdentity(model), c.prices[m]
	}
	return c
}

// addSteps builds the steps idx in their true states.
func (c *calibration) addSteps(ctx context.Context, idx []int) error {
	for _, i := range idx {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := c.cfg.Steps.Step(ctx, i)
		if err != nil {
			return fmt.Errorf("%w: step %d: %w", ErrStep, i, err)
		}
		if c.cfg.Solver.Structured && len(st.Schema) == 0 {
			return fmt.Errorf("%w: the Solver is Structured and step %d has no answer schema", ErrConfig, i)
		}
		key, err := c.cfg.Solver.Key(st.Correct)
		if err != nil {
			return fmt.Errorf("%w: step %d: its correct answer has no vote key: %w", ErrStep, i, err)
		}
		c.sampled, c.steps, c.keys = append(c.sampled, i), append(c.steps, st), append(c.keys, key)
		c.drawn = append(c.drawn, nil)
	}
	return nil
}

// job is one sample to draw: sampled step j, sample index idx.
type job struct{ j, idx int }

// jobs are n samples (indices 0..n-1) of each sampled step from the
// from-th on.
func (c *calibration) jobs(from, n int) []job {
	var out []job
	for j := from; j < len(c.steps); j++ {
		for idx := range n {
			out = append(out, job{j, idx})
		}
	}
	return out
}

// extra are n more samples of every sampled step, after those it has.
func (c *calibration) extra(n int) []job {
	var out []job
	for j := range c.steps {
		have := len(c.drawn[j])
		for idx := have; idx < have+n; idx++ {
			out = append(out, job{j, idx})
		}
	}
	return out
}

// samples is the number drawn so far.
func (c *calibration) samples() int {
	n := 0
	for _, d := range c.drawn {
		n += len(d)
	}
	return n
}

// spent is the dollars the samples drawn so far cost.
func (c *calibration) spent() float64 {
	t := 0.0
	for _, d := range c.drawn {
		for _, x := range d {
			t += x.paid
		}
	}
	return t
}

// unit is the samples of one request: the jobs from t on, of sampled step
// j, are the samples of wave w.
type unit struct {
	t, j int
	w    vote.Wave
}

// units cuts the jobs into the requests the run would send them in: each
// sampled step's run of jobs (consecutive indices) is a wave, as a race's
// wave of those indices, cut by the Sampler (several samples a request
// under the Solver's SamplesPerCall, one temperature a request).
func (c *calibration) units(jobs []job) []unit {
	var out []unit
	for t := 0; t < len(jobs); {
		e := t + 1
		for e < len(jobs) && jobs[e].j == jobs[t].j && jobs[e].idx == jobs[e-1].idx+1 {
			e++
		}
		for _, w := range c.sampler.Requests(vote.Wave{First: jobs[t].idx, N: e - t}) {
			out = append(out, unit{t: t + w.First - jobs[t].idx, j: jobs[t].j, w: w})
		}
		t = e
	}
	return out
}

// draw draws the jobs: Parallel workers take them in order from a shared
// counter (each keeps its goroutine, and grown stack, for many calls), a
// request's samples at a time: a worker takes a unit (a request's
// samples) and draws them one after another (maker.Sampler.DrawWave), the
// first making the request and the others taking their choices of it.
// No sample ever waits on another worker: a request's samples are one
// job, on the worker that took it.
func (c *calibration) draw(ctx context.Context, jobs []job) error {
	cfg, s := c.cfg, c.cfg.Solver
	out := make([]sample, len(jobs))
	units := c.units(jobs)
	var next, done atomic.Int64
	// capped is the first sample the Solver's Budget refused: no request
	// starts after it, and those in flight finish (they are paid for).
	var capped atomic.Pointer[error]
	g, gctx := errgroup.WithContext(ctx)
	for range min(cfg.Parallel, len(units)) {
		g.Go(func() error {
			for capped.Load() == nil {
				u := int(next.Add(1) - 1)
				if u >= len(units) {
					return nil
				}
				un := units[u]
				st := c.steps[un.j]
				dctx := gctx
				if s.Structured {
					dctx = maker.WithAnswerSchema(gctx, st.Schema)
				}
				ds, err := c.sampler.DrawWave(dctx, c.sampled[un.j], un.w, st.Messages, st.Decode)
				if err != nil {
					return err
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				prompt := requestPrompt(ds)
				for i, d := range ds {
					if errors.Is(d.Err, maker.ErrBudget) {
						capped.CompareAndSwap(nil, &d.Err)
						return nil
					}
					out[un.t+i] = c.sampleOf(d, un.j, prompt)
					if d := int(done.Add(1)); cfg.Progress != nil {
						cfg.Progress(d, len(jobs))
					}
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := capped.Load(); err != nil {
		have := c.samples()
		return capStop(*err, have+int(done.Load()), have+len(jobs), s.Budget)
	}
	// Jobs are in order of step and index, each index after those the
	// step has: appending keeps every step's samples in index order.
	for t, jb := range jobs {
		c.drawn[jb.j] = append(c.drawn[jb.j], out[t])
	}
	return nil
}

// promptOf is the input usage of one of the requests d made (a request's
// input tokens are on the sample that made it; one whose request a
// provider ignoring n answered short made a call of its own too), and
// whether it made any.
func promptOf(d maker.Drawn) (vote.Usage, bool) {
	u := d.Usage
	if u.Requests < 1 || d.Err != nil {
		return vote.Usage{}, false
	}
	return vote.Usage{InputTokens: u.InputTokens / u.Requests, CachedInputTokens: u.CachedInputTokens / u.Requests, CacheWriteTokens: u.CacheWriteTokens / u.Requests}, true
}

// requestPrompt is the input usage of the request of a request's samples
// ds (promptOf the first that made one): what the prompt costs a sample
// of the request that made none.
func requestPrompt(ds []maker.Drawn) vote.Usage {
	for _, d := range ds {
		if u, ok := promptOf(d); ok {
			return u
		}
	}
	return vote.Usage{}
}

// sampleOf is what Run keeps of d, a sample of sampled step j whose
// request's prompt is prompt (used when d made no request itself). Its
// usage and costs are those of a sample that is a request of its own
// (its output, and its request's prompt for input), as
// the plans take them (they bill the prompt once a request themselves);
// paid is what it cost here.
func (c *calibration) sampleOf(d maker.Drawn, j int, prompt vote.Usage) sample {
	sm := sample{member: d.Member, err: d.Err != nil, usage: d.Usage, key: d.Key}
	if d.Flag != nil {
		sm.flag = d.Flag.Error()
	}
	sm.correct = !sm.err && sm.flag == "" && d.Key == c.keys[j]
	if !sm.err {
		price := c.prices[d.Member]
		sm.paid = price.Cost(d.Usage)
		if own, ok := promptOf(d); ok {
			prompt = own
		}
		sm.usage.InputTokens, sm.usage.CachedInputTokens, sm.usage.CacheWriteTokens = prompt.InputTokens, prompt.CachedInputTokens, prompt.CacheWriteTokens
		sm.cost = price.Cost(sm.usage)
		sm.inCost = price.Cost(prompt)
	}
	return sm
}

// summarize sets the report's estimates from the samples so far.
func (c *calibration) summarize(rep *Report, start time.Time) {
	cfg := c.cfg
	cfg.look = c.look
	rep.Sampled = c.sampledSorted()
	rep.SamplesEach = len(c.drawn[0])
	rep.Look, rep.RegionConfidence = c.look, cfg.regionLevel()
	rep.All = estimate(c.drawn, func(sample) bool { return true }, cfg, c.total)
	for m := range rep.Models {
		if len(rep.Models) == 1 { // one model: its samples are all of them
			rep.Models[m].Estimate = rep.All
			continue
		}
		rep.Models[m].Estimate = estimate(c.drawn, func(x sample) bool { return x.member == m }, cfg, c.total)
	}
	rep.Wall = time.Since(start)
}

// sampledSorted are the sampled steps in increasing order.
func (c *calibration) sampledSorted() []int { return slices.Sorted(slices.Values(c.sampled)) }

// remaining are the task's steps that first leaves out, in a seeded
// random order: the steps Config.UntilDecided adds, in turn.
func remaining(total int, first []int, seed uint64) []int {
	in := make(map[int]bool, len(first))
	for _, i := range first {
		in[i] = true
	}
	out := make([]int, 0, total-len(first))
	for i := range total {
		if !in[i] {
			out = append(out, i)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x756e74696c646563)) // "untildec"
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
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
		e.Rivals = &rivals.Spread{N: min(rivals.MaxN, int(math.Round(1/r.Rate)))}
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
	cs := group(clusters)
	sp, lo, hi, top := fitSpread(cs, cfg.Confidence)
	e.Spread, e.Low, e.High = &sp, lo, hi
	if cfg.NoPlan {
		e.NoK = "not planned (Config.NoPlan)"
		return e
	}
	e.plan(cfg, total, cs, top)
	return e
}

// plan sets KMin, KBest, KMinPoint, Undecided, MoreSteps, Plan and AtK
// from the estimate: the whole run's success over the joint confidence
// region of (mean p, spread) (region).
func (e *Estimate) plan(cfg Config, total int, cs []wcluster, top float64) {
	e.KMinPoint = e.Spread.kMin(total, cfg.Target)
	chi2 := chi2Two(cfg.regionLevel())
	var v verdict
	// The method is chosen by the configuration, before the samples:
	// the steps' own bounds when the first round takes every step of the
	// task (and each has a valid sample), else the region over the
	// steps' spread (UntilDecided may go on to sample every step; it
	// keeps the region).
	e.EveryStep = cfg.StepsSampled >= total && e.clusters == total
	if e.EveryStep {
		// Every step sampled: each step's p bounded on its own.
		v = finiteVerdict(cs, cfg.Target, cfg.regionLevel(), 1)
	} else {
		reg := newRegion(cs, top-chi2/2)
		v = reg.verdict(total, cfg.Target)
		e.ICCLow, e.ICCHigh = reg.iccRange()
	}
	e.worst = v.b.worst
	e.KSafe, e.KBest = v.Safe, v.Best
	worstAt := func(k int) Spread { return v.b.worstAt[max(0, k-1)] }
	samplesEach := max(1, e.Valid/max(1, e.clusters))
	more := func() string {
		if e.EveryStep {
			s := moreSamplesEach(cs, cfg.Target, cfg.regionLevel(), samplesEach)
			if s == 0 {
				e.MoreSteps = -1
				return fmt.Sprintf("more samples of each step would not settle it within %d samples a step", MaxSamples)
			}
			// In steps' worth of samples, as MoreSteps counts.
			e.MoreSteps = max(1, int(math.Ceil((s-1)*float64(e.clusters))))
			return fmt.Sprintf("every step of the task is sampled; about %d valid samples of each, %.3g times as many, would settle it if they look like these (--samples, or --until-decided)", int(math.Ceil(s*float64(samplesEach))), s)
		}
		e.MoreSteps = moreSteps(cs, top, chi2, total, cfg.Target, e.clusters)
		if e.MoreSteps > 0 {
			return fmt.Sprintf("about %d more sampled steps would settle it if they look like these (--steps-sampled %d, or --until-decided)", e.MoreSteps, e.clusters+e.MoreSteps)
		}
		e.MoreSteps = -1
		return fmt.Sprintf("more data like these would not settle it within %d sampled steps", MaxStepsSampled)
	}
	where := fmt.Sprintf("the %.4g%% confidence region of mean p and spread", 100*cfg.regionLevel())
	if e.EveryStep {
		where = fmt.Sprintf("the steps' own %.4g%% confidence bounds on p (every step of the task sampled)", 100*cfg.regionLevel())
	}
	switch {
	case v.decided() && v.Safe > 0:
		e.KMin = v.Safe
		p := e.PlanAt(e.KMin, total)
		e.Plan = &p
	case e.High <= 0.5:
		e.Unreachable = true
		e.NoK = fmt.Sprintf("no k reaches %g: the upper bound on p, %.4f, is not above 1/2, so voting does not converge on the right answer; what helps: a stronger model, an ensemble, or a checker that verifies a step's answer", cfg.Target, e.High)
	case v.Best == 0:
		e.Unreachable = true
		hard := math.Max(e.Spread.hardShare(), e.HardShare)
		e.NoK = fmt.Sprintf("no k reaches %g anywhere in %s: about %.2g%% of steps are hard for this model (%d of %d sampled steps had a wrong majority; the fit puts %.2g%% of steps below p = 1/2), and a hard step whose errors agree is decided wrong more surely as k grows; what helps: a checker that verifies a step's answer, a stronger model, an ensemble whose models err on different steps, or escalation",
			cfg.Target, where, 100*hard, e.HardSteps, e.clusters, 100*e.Spread.hardShare())
	case v.Safe > 0:
		e.Undecided = true
		e.NoK = fmt.Sprintf("undecided at target %g: over %s the k needed runs from %d to %d (k_safe %d holds over all of it but costs more than %d times the most hopeful k); %s; what else helps: a checker that verifies a step's answer, or a stronger model",
			cfg.Target, where, v.Best, v.Safe, v.Safe, farApart, more())
	case e.EveryStep:
		e.Undecided = true
		e.NoK = fmt.Sprintf("undecided at target %g: %s allow both k = %d reaching it and no k reaching it (a step whose p may be below 1/2, with errors that agree, is decided wrong at any k); %s; what else helps: a checker that verifies a step's answer, or a stronger model",
			cfg.Target, where, v.Best, more())
	default:
		e.Undecided = true
		w := worstAt(v.Best)
		e.NoK = fmt.Sprintf("undecided at target %g: the %.4g%% confidence region of mean p and spread holds both k = %d reaching it and no k reaching it (steps as different as ICC %.3g with mean p %.4f put %.2g%% of steps below p = 1/2, and a hard step whose errors agree is decided wrong at any k); %s; what else helps: a checker that verifies a step's answer, or a stronger model",
			cfg.Target, 100*cfg.regionLevel(), v.Best, w.ICC, w.Mean, 100*w.hardShare(), more())
	}
	if cfg.K > 0 {
		p := e.PlanAt(cfg.K, total)
		e.AtK = &p
	}
}

// moreSteps forecasts how many more sampled steps would decide the plan
// (verdict.decided) if they looked like those sampled: n steps' clusters
// scaled by s have the same maximum-likelihood point and a log-likelihood
// s times as steep, so their region is this one's at χ²/s. It returns
// the least such count, by bisection on log s to within 5%, or -1 when
// even MaxStepsSampled steps would not decide it.
func moreSteps(cs []wcluster, top, chi2 float64, total int, target float64, n int) int {
	if n < 1 {
		return -1
	}
	decided := func(s float64) bool { return newRegion(cs, top-chi2/(2*s)).verdict(total, target).decided() }
	hiS := float64(MaxStepsSampled) / float64(n)
	if hiS <= 1 || !decided(hiS) {
		return -1
	}
	lo, hi := 1.0, hiS
	for hi/lo > 1.05 {
		mid := math.Sqrt(lo * hi)
		if decided(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return max(1, int(math.Ceil((hi-1)*float64(n))))
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
	p := Plan{K: k, PFull: Spread{Mean: e.P, ICC: icc}.pFull(steps, k)}
	if k >= 1 && k <= len(e.worst) {
		p.PFullBound = runSuccess(steps, e.worst[k-1])
	}
	if e.ValidRate > 0 {
		p.SamplesPerStep = laws.ExpectedSamples(e.P, k) / e.ValidRate
		p.SamplesPerStepLow = laws.ExpectedSamples(e.Low, k) / e.ValidRate
	}
	for _, f := range []*float64{&p.PFull, &p.PFullBound, &p.SamplesPerStep, &p.SamplesPerStepLow} {
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
		ps, err1 := rivals.PStep(e.P, k, *e.Rivals)
		n, err2 := rivals.ExpectedSamples(e.P, k, *e.Rivals)
		// rivals.PStep can return NaN without an error (seen at p = 0.9,
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
		if e.EveryStep {
			fmt.Fprintf(b, "  every step of the task sampled: k is planned on each step's own %.4g%% bound on p, not on a model of how steps differ\n", 100*r.RegionConfidence)
		} else if sp := e.Spread; sp != nil {
			fmt.Fprintf(b, "  steps differ: intra-step correlation %.3g at the fit (0: every step alike), from %.3g to %.3g in the %.4g%% confidence region of mean p and spread; k is planned over the whole region\n", sp.ICC, e.ICCLow, e.ICCHigh, 100*r.RegionConfidence)
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
		fmt.Fprintf(b, "  k_min %d for %d steps at target %g over the whole confidence region (%d at its most hopeful point; %d at the fit alone)\n",
			e.KMin, r.Total, r.Target, e.KBest, e.KMinPoint)
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
	fmt.Fprintf(b, "    whole-run success at least %.6f (the least over the confidence region; %.6f at the fit, an estimate); expected %.3f samples per step (%.3f at the lower bound on p), %.0f in all",
		p.PFullBound, p.PFull, p.SamplesPerStep, p.SamplesPerStepLow, p.Samples)
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
// ErrBudget and the refused call's error (a *budget.Error, which
// wraps maker.ErrBudget).
type budgetStop struct {
	msg   string
	cause error
}

func (e *budgetStop) Error() string   { return e.msg }
func (e *budgetStop) Unwrap() []error { return []error{ErrBudget, e.cause} }

// capStop words the stop of a calibration after done of n samples, when
// the budget refused a call (cause).
func capStop(cause error, done, n int, sp maker.Spender) error {
	worst := ""
	var be *budget.Error
	if errors.As(cause, &be) {
		worst = fmt.Sprintf(": the next call's worst case, $%.6f (its prompt and a reply of the whole reply cap), would pass it", be.Worst)
	}
	var spent, capUSD float64
	if b, ok := sp.(*budget.Budget); ok {
		spent, capUSD = b.Spent(), b.Cap
	} else if be != nil {
		spent, capUSD = be.Spent, be.Cap
	}
	return &budgetStop{cause: cause, msg: fmt.Sprintf("%v: calibration stopped at its spending cap after %d of %d samples, $%.6f spent of $%.6f%s; give a larger cap, or fewer steps sampled or samples",
		ErrBudget, done, n, spent, capUSD, worst)}
}
