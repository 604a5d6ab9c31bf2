package maker

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/vote"
	"github.com/tmc/langchaingo/llms"
)

// Config is what a run is set to: the fields that decide its answers (the
// margin, the reply cap, the red flags, the temperatures, the call
// options, how tools are declared), bound it (steps, time per call,
// samples per request) and price it. It is a plain value: build it, check
// it with Validate, and hand it to a Solver (which embeds it). A journal's
// Settings record the fields that decide answers, so a resume with other
// settings is refused. The zero value is the paper's setting (k = 3, one
// model, every red flag), and each field's zero value is a working default.
type Config struct {
	// Vote configures each step's race; see vote.Config.
	Vote vote.Config `flags:"Vote."`
	// AdaptiveK, if set, chooses each step's k from the run's own votes
	// instead of Vote.K (see KPolicy; maker/adaptive.Policy is mdap's);
	// nil keeps the fixed Vote.K.
	AdaptiveK KPolicy
	// Escalation, if set, is what a contested step gets (see
	// Escalation); nil races every step to its end with one model.
	Escalation *Escalation
	// Writes is the stricter vote for a side-effect call (see
	// WriteRule): the zero value runs one only on a unanimous first k
	// votes, and decides the step again at twice k otherwise.
	Writes WriteRule
	// ToolFirst votes a tool call hierarchically (vote.RaceGrouped): a
	// first race decides the tool by first-to-ahead-by-k over the
	// samples' tools (an answer without a call votes as itself), a second
	// decides the arguments among that tool's samples, reusing the first
	// race's. Off by default: a call then votes whole.
	ToolFirst bool
	// FlagAlarm is the red-flag-rate alarm (see FlagAlarm): on by
	// default, a step whose red-flag rate jumps far above the run's is
	// stopped or escalated by the escalation policy.
	FlagAlarm FlagAlarm
	// MaxTokens caps a reply; a longer one is red-flagged. 0 means
	// DefaultMaxTokens; negative or above MaxReplyBytes is refused.
	MaxTokens int `flag:"max-tokens" usage:"reply cap in tokens; a longer reply is red-flagged (0: the solver's default)"`
	// Temperature gives sample i's temperature. Nil means
	// DefaultTemperature.
	Temperature func(sample int) float64
	// Flags chooses the red flags; the zero value applies them all.
	Flags FlagRules
	// CallOptions are added to every model call, after the solver's own:
	// the temperature, the reply cap and the sample's seed (its index
	// plus one, llms.WithSeed, so a provider that honours seeds gives each
	// sample its own reproducible draw). A seed set here overrides the
	// per-sample one, and samples at one temperature may then all agree.
	CallOptions []llms.CallOption
	// ToolDeclaration is how the Solver's Tools reach the model: natively,
	// in the prompt, or both; the zero value chooses by the model (see
	// DeclareAuto). The choice is the same for every sample of a run,
	// and the journal's settings record it.
	ToolDeclaration ToolDeclaration
	// Structured asks for structured output: the task, which must be a
	// StructuredTask (else Solve fails with ErrNoAnswerSchema), offers
	// its answer's JSON Schema, and every call carries it in its context
	// (AnswerSchemaFrom) with llms.WithJSONMode, so a model that supports
	// structured output (maker/models: OpenAI-compatible servers and
	// Ollama) constrains its replies to it. The journal records the
	// schema's digest.
	Structured bool
	// Timeout bounds each model call (langchaingo's clients have none of
	// their own); a call that takes longer is a failed draw wrapping
	// ErrCallTimeout. Zero means no bound but the context's; negative is
	// refused.
	Timeout time.Duration
	// Settings adds what else determines the run's answers and that the
	// solver cannot see (a prompt template's version, say) to the
	// journal's Settings (as Settings.Extra), compared on resume. The
	// model's identity, k, the caps, flags, temperatures, declared tools
	// and call options are recorded without it (see Settings).
	Settings map[string]string
	// RerunPending allows a resumed run whose journal ends with a pending
	// side-effect call to finish that step: the journaled winner's call
	// runs again, exactly as decided, and the journaled winner is applied.
	// Off, such a resume fails with ErrPendingSideEffect.
	RerunPending bool
	// MaxSteps stops a run that is not done after that many steps, with
	// ErrStepLimit. Zero means no limit; negative is refused.
	MaxSteps int
	// SamplesPerCall asks for several samples of a wave in one request
	// (llms.WithN), each returned choice a sample with its own identity:
	// 0 or 1 means one sample per request (the paper's way), N > 1 at
	// most N choices a request (capped at MaxSamplesPerCall),
	// SamplesPerCallAuto as many as the wave. Samples of different
	// temperatures never share a request, so under DefaultTemperature
	// the first sample of a step is a request of its own. A provider
	// that returns fewer choices than asked is detected at its first
	// such answer; the samples it left out, and every later one, are
	// separate calls. An Ensemble always draws one sample per request.
	// See docs/cost.md. Below SamplesPerCallAuto is refused.
	SamplesPerCall int
	// Price turns usage into Report.Cost (and what a Budget counts);
	// a negative or non-finite price is refused.
	Price Price
}

// configName is where Config's field errors come from.
const configName = "maker.Config"

// Validate checks every field of c as Solve will use it, without a model
// call; it does not call Temperature or the CallOptions, and what needs the
// model (an EscalateModel's model being the run's own) or the task (a
// schema for Structured) is Solve's to check.
//
// The error, if any, is a *FieldError (wrapping ErrConfig) from
// "maker.Config" that names the first refused field by its path in c
// ("MaxTokens", "Vote.K", "AdaptiveK.Target"), its value, and the fix, so
// a caller that set the fields from its own settings (a command's flags)
// can name its own setting instead. Solve calls Validate first. Cost: a
// few comparisons.
func (c Config) Validate() error {
	if _, err := c.Vote.WithDefaults(); err != nil {
		return within("Vote.", err)
	}
	if c.AdaptiveK != nil {
		if err := c.checkKPolicy(); err != nil {
			return err
		}
	}
	for _, err := range []error{c.Escalation.check(), c.Writes.check(), c.FlagAlarm.check()} {
		if err != nil {
			return err
		}
	}
	switch {
	case c.MaxTokens < 0 || c.MaxTokens > MaxReplyBytes: // a token is a byte or more
		return fielderr.New(configName, "MaxTokens", c.MaxTokens, fmt.Sprintf("use 1 to %d, or 0 for DefaultMaxTokens (%d)", MaxReplyBytes, DefaultMaxTokens))
	case c.Timeout < 0:
		return fielderr.New(configName, "Timeout", c.Timeout, "use a positive duration, or 0 for no bound but the context's")
	case c.MaxSteps < 0:
		return fielderr.New(configName, "MaxSteps", c.MaxSteps, "use 1 or more, or 0 for no limit")
	case c.SamplesPerCall < SamplesPerCallAuto:
		return fielderr.New(configName, "SamplesPerCall", c.SamplesPerCall, fmt.Sprintf("use 0 or 1 (one sample per request), 2 or more (at most %d are asked), or SamplesPerCallAuto (%d)", MaxSamplesPerCall, SamplesPerCallAuto))
	}
	if _, err := ParseToolDeclaration(string(c.ToolDeclaration)); err != nil {
		return fielderr.Of(configName, "ToolDeclaration", string(c.ToolDeclaration), err)
	}
	for _, f := range []struct {
		name  string
		value float64
	}{
		{"Price.InputPerMillion", c.Price.InputPerMillion}, {"Price.OutputPerMillion", c.Price.OutputPerMillion},
		{"Price.CachedInputPerMillion", c.Price.CachedInputPerMillion}, {"Price.CacheWritePerMillion", c.Price.CacheWritePerMillion},
	} {
		if !(f.value >= 0) || math.IsInf(f.value, 1) {
			return fielderr.New(configName, f.name, f.value, "use a finite price of 0 or more dollars per million tokens")
		}
	}
	return nil
}

// within returns err, a field error of a part of Config (its Vote, its
// AdaptiveK), as Config's own: each field named by its path from Config
// (prefix plus its name). Another error is returned as it is.
func within(prefix string, err error) error {
	var fe *fielderr.Error
	if !errors.As(err, &fe) {
		return err
	}
	out := *fe
	out.Config = configName
	out.Fields = make([]fielderr.Field, len(fe.Fields))
	for i, f := range fe.Fields {
		out.Fields[i] = fielderr.Field{Name: prefix + f.Name, Value: f.Value}
	}
	return &out
}
