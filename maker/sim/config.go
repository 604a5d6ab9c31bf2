package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// The sentinel errors of this package; test with [errors.Is].
var (
	// ErrConfig: [New] or [Config.Validate] refused a configuration. The
	// message names the field and the value.
	ErrConfig = errors.New("sim: invalid config")

	// ErrUnknownPrompt: the oracle could not read the prompt (it is not a
	// step prompt of its task). GenerateContent wraps the oracle's error
	// with it.
	ErrUnknownPrompt = errors.New("sim: prompt not understood by the oracle")

	// ErrProvider: a simulated provider failure, drawn with probability
	// Config.ErrorRate, to exercise a solver's error budget. It is
	// transient: the same prompt asked again as another sample may succeed.
	ErrProvider = errors.New("sim: simulated provider error")
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

// DefaultMaxTokens is the cap an overlong or cut-off reply is measured
// against when the request sets no llms.WithMaxTokens: the paper's 750.
const DefaultMaxTokens = 750

// Config is the behaviour of a simulated model. All probabilities are per
// call.
//
// The zero Config is valid and describes an adversarial model: P = 0, so
// every reply is wrong, all of them the same wrong answer (variant 0); no
// red flags, no provider errors, no latency, seed 0, and every call seen as
// unidentified (see SampleID). Start from [DefaultConfig] for a realistic
// one.
type Config struct {
	// Seed is the root of every random draw.
	Seed uint64

	// P is the probability that a valid reply (not a red flag, not an
	// error) is the correct one. In [0, 1].
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

	// SampleID reports the identity of the sample a call's context belongs
	// to: its step and its index within the step. The solver wires
	// maker.SampleIDFrom into it:
	//
	//	cfg.SampleID = func(ctx context.Context) (int, int, bool) {
	//		id, ok := maker.SampleIDFrom(ctx)
	//		return id.Step, id.Index, ok
	//	}
	//
	// With SampleID nil or returning ok = false, a call is identified by a
	// per-model call counter instead, which is not schedule-independent.
	SampleID func(ctx context.Context) (step, index int, ok bool)
}

// FlagMix weighs the three kinds of red-flag replies. Weights are relative
// and must not be negative; all zero means equal thirds.
type FlagMix struct {
	// Overlong: a rambling reply whose CompletionTokens exceed the cap (the
	// request's MaxTokens, or DefaultMaxTokens) with StopReason "stop", as
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

// LatencyKind names a latency distribution.
type LatencyKind int

// The latency distributions.
const (
	// LatencyNone: answer at once.
	LatencyNone LatencyKind = iota
	// LatencyFixed: always Latency.Fixed.
	LatencyFixed
	// LatencyUniform: uniform in [Latency.Min, Latency.Max].
	LatencyUniform
	// LatencyLognormal: Latency.Median × exp(Latency.Sigma × Z), Z standard
	// normal, capped at Latency.Max when Max > 0.
	LatencyLognormal
)

// Latency is a latency distribution. Build one with [FixedLatency],
// [UniformLatency] or [LognormalLatency], or fill the fields the Kind uses.
// The zero value is no latency.
type Latency struct {
	Kind     LatencyKind
	Fixed    time.Duration // LatencyFixed
	Min, Max time.Duration // LatencyUniform; Max also caps LatencyLognormal
	Median   time.Duration // LatencyLognormal
	Sigma    float64       // LatencyLognormal, the log-space standard deviation
}

// FixedLatency is a constant latency d.
func FixedLatency(d time.Duration) Latency { return Latency{Kind: LatencyFixed, Fixed: d} }

// UniformLatency is a latency uniform in [min, max].
func UniformLatency(min, max time.Duration) Latency {
	return Latency{Kind: LatencyUniform, Min: min, Max: max}
}

// LognormalLatency is a lognormal latency with the given median and
// log-space standard deviation sigma, uncapped; set the result's Max to cap
// its tail.
func LognormalLatency(median time.Duration, sigma float64) Latency {
	return Latency{Kind: LatencyLognormal, Median: median, Sigma: sigma}
}

// DefaultConfig is a model like the paper's gpt-4.1-mini on Towers of
// Hanoi: P = [DefaultP], wrong answers spread over [DefaultWrongAnswers],
// red flags at [DefaultFlagRate] split evenly, no provider errors, no
// latency, seed 0. Callers set SampleID (see Config.SampleID).
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
	for _, f := range []struct {
		name string
		v    float64
	}{{"P", c.P}, {"Concentration", c.Concentration}, {"FlagRate", c.FlagRate}, {"ErrorRate", c.ErrorRate}} {
		if !(f.v >= 0 && f.v <= 1) { // also catches NaN
			return fmt.Errorf("%w: %s = %v, want a probability in [0, 1]", ErrConfig, f.name, f.v)
		}
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
	if l.Fixed < 0 || l.Min < 0 || l.Max < 0 || l.Median < 0 {
		return fmt.Errorf("%w: latency %+v has a negative duration", ErrConfig, l)
	}
	switch l.Kind {
	case LatencyNone, LatencyFixed:
	case LatencyUniform:
		if l.Min > l.Max {
			return fmt.Errorf("%w: uniform latency Min %v above Max %v", ErrConfig, l.Min, l.Max)
		}
	case LatencyLognormal:
		if l.Median <= 0 {
			return fmt.Errorf("%w: lognormal latency needs a positive Median, got %v", ErrConfig, l.Median)
		}
		if !(l.Sigma >= 0) || math.IsInf(l.Sigma, 0) {
			return fmt.Errorf("%w: lognormal latency Sigma = %v, want a finite value of 0 or more", ErrConfig, l.Sigma)
		}
	default:
		return fmt.Errorf("%w: unknown latency kind %d", ErrConfig, l.Kind)
	}
	return nil
}
