package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// The sentinel errors of this package; test with [errors.Is].
var (
	// ErrConfig: [New] or [Config.Validate] refused a configuration. The
	// error holds a [*FieldError] (see [errors.As]), which names the
	// field, the value and the fix. It is mdap's one configuration
	// sentinel: every package's ErrConfig is the same value.
	ErrConfig = fielderr.ErrConfig

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
	Seed uint64 `flag:"seed" usage:"simulated model: seed of every random draw"`

	// IgnoreN makes the model answer a request for several choices
	// (llms.WithN) with one, as Anthropic's and Ollama's native APIs do.
	// Off, a request of a sample identity (step, i) for n choices gets
	// the samples i, i+1, ..., i+n-1, each the one it would be alone.
	IgnoreN bool

	// P is the probability that a valid reply (not a red flag, not an
	// error) is the correct one. In (0, 1].
	P float64 `flag:"p" usage:"simulated model: probability that a valid reply is right"`

	// WrongAnswers is how many distinct wrong answers (the oracle's
	// variants 0 .. WrongAnswers-1) the wrong replies are spread over,
	// uniformly. 0 and 1 both mean every wrong reply is variant 0: errors
	// fully correlated. Must not be negative.
	WrongAnswers int `flag:"wrong-answers" usage:"simulated model: distinct wrong answers the errors spread over (1 = all errors alike)"`

	// Concentration is the probability that a wrong reply is variant 0
	// whatever WrongAnswers says; otherwise it is drawn uniformly from
	// [0, WrongAnswers). 0 is a pure spread, 1 pure concentration. In [0, 1].
	Concentration float64 `flag:"concentration" usage:"simulated model: probability that a wrong reply is the most common wrong answer"`

	// FlagRate is the probability of a red-flag reply, split among the
	// kinds by Flags. In [0, 1].
	FlagRate float64 `flag:"flag-rate" usage:"simulated model: probability of a red-flag reply (overlong, cut off, malformed)"`

	// Flags weighs the red-flag kinds. The zero value splits FlagRate
	// evenly among the three.
	Flags FlagMix

	// ErrorRate is the probability that a call fails with [ErrProvider]
	// (after its latency). In [0, 1]; ErrorRate + FlagRate must not exceed 1.
	ErrorRate float64 `flag:"error-rate" usage:"simulated model: probability of a provider error"`

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
	DifficultySpread float64 `flag:"difficulty-spread" usage:"simulated model: spread of per-step difficulty, 0 (every step at --p) up to but not including 1; each step's p is drawn around --p"`

	// HardAgree is how often the errors of a hard step agree: on a step
	// whose drawn p is below 1/2 (a step the model gets wrong more often
	// than right), a wrong reply is wrong answer 0 with probability
	// HardAgree, and otherwise drawn from the usual mix (Concentration,
	// WrongAnswers). So a hard step's wrong replies go to answer 0 with
	// probability HardAgree + (1-HardAgree) × (Concentration +
	// (1-Concentration)/WrongAnswers). It matters only with a
	// DifficultySpread (without one no step is hard unless P < 1/2). In
	// [0, 1]; default 0.
	HardAgree float64 `flag:"hard-agree" usage:"simulated model: probability that a wrong reply on a hard step (its p below 1/2) is the same wrong answer"`

	// SurfaceForms makes right replies come in that many surface forms:
	// a right reply is the oracle's form f (Surfacer), f drawn uniformly
	// from [0, SurfaceForms), as a model that writes "Paris", "paris."
	// or 0.30000000000000004 for one answer. 0 and 1 mean one form (the
	// oracle's Correct). It needs an oracle that implements Surfacer
	// ([New] refuses another). Must not be negative.
	SurfaceForms int

	// Drift changes P during the run: from each change's Step on (by the
	// sample's identity), P is the change's P (see PAt); with a
	// DifficultySpread, each step's p is drawn around it. Steps must
	// increase from 1; nil is no drift. It makes a model that gets worse
	// (or better) late in a run, for tests of adaptive k.
	Drift []PChange
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

// LatencyOf is the latency a median and a spread give, as flags give
// them: none when both are 0, FixedLatency(median) when sigma is 0, else
// LognormalLatency(median, sigma), so that any value given reaches
// Config.Validate (a sigma without a median is refused there:
// Latency.Sigma needs Latency.Median).
func LatencyOf(median time.Duration, sigma float64) Latency {
	switch {
	case sigma != 0:
		return LognormalLatency(median, sigma)
	case median != 0:
		return FixedLatency(median)
	}
	return Latency{}
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

// Validate checks c and returns nil or an error holding a [*FieldError]
// (find it with [errors.As]; it wraps [ErrConfig]) naming the first bad
// field and how to fix it: P outside
// (0, 1] or not a number, another probability outside [0, 1], a
// DifficultySpread outside [0, 1), a Drift change out of order or with a
// P outside (0, 1], FlagRate + ErrorRate above 1, a negative
// WrongAnswers, a negative or infinite flag weight, or a latency with a
// negative duration, a uniform Min above Max, a lognormal sigma that is
// negative or not finite, or a lognormal median that is not positive.
// Cost: O(len(Drift)).
func (c Config) Validate() error {
	if c.SurfaceForms < 0 {
		return fieldErr("SurfaceForms", c.SurfaceForms, "use 0 or 1 (one form) or more")
	}
	if !(c.P > 0 && c.P <= 1) { // also catches NaN
		err := fieldErr("P", c.P, probabilityAbove0)
		if c.P == 0 {
			return fmt.Errorf("%w; set P to the probability that a valid reply is right (DefaultConfig has the paper's %v)", err, DefaultP)
		}
		return err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"FlagRate", c.FlagRate}, {"ErrorRate", c.ErrorRate}, {"Concentration", c.Concentration}, {"HardAgree", c.HardAgree}} {
		if !(f.v >= 0 && f.v <= 1) { // also catches NaN
			return fieldErr(f.name, f.v, "use a probability 0 to 1")
		}
	}
	if !(c.DifficultySpread >= 0 && c.DifficultySpread < 1) {
		return fieldErr("DifficultySpread", c.DifficultySpread, "use 0 (no spread) up to but not including 1")
	}
	if err := c.validateDrift(); err != nil {
		return err
	}
	if c.FlagRate+c.ErrorRate > 1 {
		return &FieldError{Config: configName, Fields: []Field{{Name: "FlagRate", Value: c.FlagRate}, {Name: "ErrorRate", Value: c.ErrorRate}}, Fix: "must add up to at most 1"}
	}
	if c.WrongAnswers < 0 {
		return fieldErr("WrongAnswers", c.WrongAnswers, "use 0 or more (0 and 1: every wrong reply alike)")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Flags.Overlong", c.Flags.Overlong}, {"Flags.CutOff", c.Flags.CutOff}, {"Flags.Malformed", c.Flags.Malformed}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fieldErr(f.name, f.v, "use a finite weight of 0 or more")
		}
	}
	return c.Latency.validate()
}

// probabilityAbove0 is the fix of a P: Config.P's and a Drift change's.
const probabilityAbove0 = "use a probability above 0, up to 1"

// validate checks a latency: what its kind uses is not negative, a
// uniform's min is not above its max, a lognormal's sigma is finite and
// not negative and its median positive (sigma first: a command line that
// gives a sigma without a median is told about the sigma it gave).
func (l Latency) validate() error {
	const nonNegative = "must be 0 (none) or positive"
	switch l.kind {
	case latencyFixed:
		if l.fixed < 0 {
			return fieldErr("Latency", l.fixed, nonNegative)
		}
	case latencyUniform:
		switch {
		case l.min < 0:
			return fieldErr("Latency.Min", l.min, nonNegative)
		case l.min > l.max:
			return fieldErr("Latency.Min", l.min, fmt.Sprintf("must be at most Latency.Max (%v)", l.max))
		}
	case latencyLognormal:
		switch {
		case !(l.sigma >= 0) || math.IsInf(l.sigma, 0):
			return fieldErr("Latency.Sigma", l.sigma, "use a finite number of 0 (fixed latency) or more")
		case l.median == 0 && l.sigma > 0:
			return &FieldError{Config: configName, Fields: []Field{{Name: "Latency.Sigma"}}, Clause: "needs Latency.Median (the median)"}
		case l.median <= 0:
			return fieldErr("Latency.Median", l.median, "must be positive")
		case l.max < 0:
			return fieldErr("Latency.Max", l.max, "must be 0 (no cap) or positive")
		}
	}
	return nil
}

// FieldError is the error of [Config.Validate] and [New]: the fields at
// fault with their values, and how to fix them (its Config is
// "sim.Config"). It is mdap's one configuration error, the same type
// every library configuration reports with (maker.FieldError too); it
// wraps [ErrConfig]. A caller that sets the fields from its own settings
// (a command's flags) maps each Field.Name back to its setting and says
// Fix in its own terms, without a second copy of the rules. A Name is the
// Go name in Config ("P", "Drift[0].Step"); a latency's parts are
// "Latency" (a fixed one), "Latency.Min", "Latency.Max", "Latency.Median"
// and "Latency.Sigma".
type FieldError = fielderr.Error

// Field is one field of a [FieldError] and its refused value.
type Field = fielderr.Field

// fieldErr is a FieldError of one field.
func fieldErr(name string, v any, fix string) *FieldError {
	return fielderr.New(configName, name, v, fix)
}

// configName is where this package's field errors come from.
const configName = "sim.Config"
