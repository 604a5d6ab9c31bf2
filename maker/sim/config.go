package sim

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// The sentinel errors of this package; test with [errors.Is].
var (
	// ErrConfig: [New] or [Config.Validate] refused a configuration. The
	// message names the field and the value.
	ErrConfig = errors.New("invalid configuration")

	// ErrUnknownPrompt: the oracle could not read the prompt (it is not a
	// step prompt of its task). GenerateContent wraps the oracle's error
	// with it.
	ErrUnknownPrompt = errors.New("prompt not understood by the oracle")

	// ErrProvider: a simulated provider failure, drawn with probability
	// Config.ErrorRate, to exercise a solver's error budget. It is
	// transient: the same prompt asked again as another sample may succeed.
	ErrProvider = errors.New("simulated provider error")
)

// DefaultP is the per-step success rate the paper measured for
// gpt-4.1-mini on Towers of Hanoi (p = 0.9978), used by [DefaultConfig].
const DefaultP = 0.9978

// DefaultFlagRate is [DefaultConfig]'s red-flag rate. It is our choice, a
// small rate that exercises the red flags in every long run, not a figure
// from the paper.
const DefaultFlagRate = 0.001

// DefaultWrongAnswers is [DefaultConfig]'s number of distinct wrong
// answers: wrong replies are spread uniformly over that many (our choice).
const DefaultWrongAnswers = 8

// Config is the behaviour of a simulated model. All probabilities are per
// call. Start from [DefaultConfig], the paper's model, and change what the
// experiment needs; every field's zero value is a plain choice (no red
// flags, no errors, no latency, seed 0) except P, which must be set: a
// zero Config is refused by [New], since a model that is never right is
// not a model to vote with.
type Config struct {
	// Seed is the root of every random draw.
	Seed uint64

	// IgnoreN makes the model answer a request for several choices
	// (llms.WithN) with one, as Anthropic's and Ollama's native APIs do.
	// Off, a request of a sample identity (step, i) for n choices gets
	// the samples i, i+1, ..., i+n-1, each the one it would be alone.
	IgnoreN bool

	// P is the probability that a valid reply (not a red flag, not an
	// error) is the correct one. In (0, 1].
	P float64

	// WrongAnswers is how many distinct wrong answers (the oracle's
	// variants 0 .. WrongAnswers-1) the wrong replies are spread over,
	// uniformly. 0 and 1 both mean every wrong reply is variant 0: errors
	// fully correlated. Must not be negative.
	WrongAnswers int

	// Concentration is the probability that a wrong reply is variant 0
	// whatever WrongAnswers says; otherwise it is drawn uniformly from
	// [0, WrongAnswers). 0 is a pure spread, 1 pure concentration. In [0, 1].
	Concentration float64

	// FlagRate is the probability of a red-flag reply, split among the
	// kinds by Flags. In [0, 1].
	FlagRate float64

	// Flags weighs the red-flag kinds. The zero value splits FlagRate
	// evenly among the three.
	Flags FlagMix

	// ErrorRate is the probability that a call fails with [ErrProvider]
	// (after its latency). In [0, 1]; ErrorRate + FlagRate must not exceed 1.
	ErrorRate float64

	// Latency is the time a call takes before answering. The zero value is
	// no latency.
	Latency Latency

	// DifficultySpread makes some steps harder than others. With it, each
	// step's probability of a right valid reply is not P but a p drawn
	// once per (Seed, step) from a Beta distribution with mean P and
	// variance DifficultySpread × P(1-P): 0 (the default) is no spread,
	// every step at P; towards 1 the steps split into ones always right
	// and ones always wrong. It is the correlation between two replies'
	// rightness on one step (the beta-binomial's intra-class correlation).
	// In [0, 1).
	DifficultySpread float64

	// HardAgree is how often the errors of a hard step agree: on a step
	// whose drawn p is below 1/2 (a step the model gets wrong more often
	// than right), a wrong reply is wrong answer 0 with probability
	// HardAgree, and otherwise drawn from the usual mix (Concentration,
	// WrongAnswers). So a hard step's wrong replies go to answer 0 with
	// probability HardAgree + (1-HardAgree) × (Concentration +
	// (1-Concentration)/WrongAnswers). It matters only with a
	// DifficultySpread (without one no step is hard unless P < 1/2). In
	// [0, 1]; default 0.
	HardAgree float64
}

// Hard is the drawn p below which a step counts as hard (see
// Config.HardAgree).
const Hard = 0.5

// FlagMix weighs the three kinds of red-flag replies. Weights are relative
// and must not be negative; all zero means equal thirds.
type FlagMix struct {
	// Overlong: a rambling reply whose CompletionTokens exceed the cap (the
	// request's MaxTokens, or maker.DefaultMaxTokens) with StopReason "stop", as
	// from a provider that does not enforce the cap. Its text ends with a
	// wrong answer, so a solver that forgets the length check votes wrong.
	Overlong float64
	// CutOff: a reply stopped at exactly the cap, StopReason "length", its
	// answer truncated.
	CutOff float64
	// Malformed: a reply in no acceptable format (StopReason "stop"): from
	// the oracle's [Malformer] if it has one, else prose with no answer or
	// unterminated JSON.
	Malformed float64
}

// latencyKind names a latency distribution.
type latencyKind int

const (
	latencyNone latencyKind = iota
	latencyFixed
	latencyUniform
	latencyLognormal
)

// Latency is a latency distribution: the zero value is none (answer at
// once); [FixedLatency], [UniformLatency] and [LognormalLatency] build the
// others, and [Latency.Capped] bounds one.
type Latency struct {
	kind     latencyKind
	fixed    time.Duration
	min, max time.Duration // uniform; max also caps a lognormal
	median   time.Duration
	sigma    float64
}

// FixedLatency is a constant latency d.
func FixedLatency(d time.Duration) Latency { return Latency{kind: latencyFixed, fixed: d} }

// UniformLatency is a latency uniform in [min, max].
func UniformLatency(min, max time.Duration) Latency {
	return Latency{kind: latencyUniform, min: min, max: max}
}

// LognormalLatency is a lognormal latency, median × exp(sigma × Z) with Z
// standard normal: heavy-tailed like real providers. It is uncapped; see
// [Latency.Capped].
func LognormalLatency(median time.Duration, sigma float64) Latency {
	return Latency{kind: latencyLognormal, median: median, sigma: sigma}
}

// Capped returns l with its draws capped at max (a lognormal's tail). It
// changes only a lognormal latency; the others are bounded already.
func (l Latency) Capped(max time.Duration) Latency {
	if l.kind == latencyLognormal {
		l.max = max
	}
	return l
}

// String describes the distribution, for reports.
func (l Latency) String() string {
	switch l.kind {
	case latencyFixed:
		return "fixed " + l.fixed.String()
	case latencyUniform:
		return fmt.Sprintf("uniform %s..%s", l.min, l.max)
	case latencyLognormal:
		s := fmt.Sprintf("lognormal median %s sigma %g", l.median, l.sigma)
		if l.max > 0 {
			s += " capped at " + l.max.String()
		}
		return s
	}
	return "none"
}

// DefaultConfig is a model like the paper's gpt-4.1-mini on Towers of
// Hanoi: P = [DefaultP], wrong answers spread over [DefaultWrongAnswers],
// red flags at [DefaultFlagRate] split evenly, no provider errors, no
// latency, seed 0.
func DefaultConfig() Config {
	return Config{
		P:            DefaultP,
		WrongAnswers: DefaultWrongAnswers,
		FlagRate:     DefaultFlagRate,
	}
}

// Validate checks c and returns nil or an error wrapping [ErrConfig] that
// names the first bad field: a probability outside [0, 1] or not a number,
// ErrorRate + FlagRate above 1, a negative WrongAnswers, flag weight,
// duration or sigma, Min above Max, an unknown latency kind, or a
// lognormal latency without a positive median.
func (c Config) Validate() error {
	if !(c.P > 0) && c.P == c.P {
		return fmt.Errorf("%w: P = %v: every valid reply would be wrong; set P to the probability that a valid reply is right (DefaultConfig has the paper's %v)", ErrConfig, c.P, DefaultP)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"P", c.P}, {"Concentration", c.Concentration}, {"FlagRate", c.FlagRate}, {"ErrorRate", c.ErrorRate}, {"HardAgree", c.HardAgree}} {
		if !(f.v >= 0 && f.v <= 1) { // also catches NaN
			return fmt.Errorf("%w: %s = %v, want a probability in [0, 1]", ErrConfig, f.name, f.v)
		}
	}
	if !(c.DifficultySpread >= 0 && c.DifficultySpread < 1) {
		return fmt.Errorf("%w: DifficultySpread = %v, want 0 (no spread) up to but not including 1", ErrConfig, c.DifficultySpread)
	}
	if c.ErrorRate+c.FlagRate > 1 {
		return fmt.Errorf("%w: ErrorRate + FlagRate = %v, want at most 1", ErrConfig, c.ErrorRate+c.FlagRate)
	}
	if c.WrongAnswers < 0 {
		return fmt.Errorf("%w: WrongAnswers = %d, want 0 or more", ErrConfig, c.WrongAnswers)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Flags.Overlong", c.Flags.Overlong}, {"Flags.CutOff", c.Flags.CutOff}, {"Flags.Malformed", c.Flags.Malformed}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: %s = %v, want a finite weight of 0 or more", ErrConfig, f.name, f.v)
		}
	}
	return c.Latency.validate()
}

func (l Latency) validate() error {
	if l.fixed < 0 || l.min < 0 || l.max < 0 || l.median < 0 {
		return fmt.Errorf("%w: latency %s has a negative duration", ErrConfig, l)
	}
	switch l.kind {
	case latencyUniform:
		if l.min > l.max {
			return fmt.Errorf("%w: uniform latency min %v above max %v", ErrConfig, l.min, l.max)
		}
	case latencyLognormal:
		if l.median <= 0 {
			return fmt.Errorf("%w: lognormal latency needs a positive median, got %v", ErrConfig, l.median)
		}
		if !(l.sigma >= 0) || math.IsInf(l.sigma, 0) {
			return fmt.Errorf("%w: lognormal latency sigma = %v, want a finite value of 0 or more", ErrConfig, l.sigma)
		}
	}
	return nil
}
