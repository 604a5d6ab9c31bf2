package runsetup

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/progress"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
)

// settingsName is where the field errors of Settings come from.
const settingsName = "runsetup.Settings"

// Settings are the settings of a run as a command line gives them, apart
// from what runs it (its models, journal and watchers), each field tagged
// with its flag (internal/flagbind): the vote's bounds, the replies' cap
// and price, how many samples a request asks for, the simulated model's
// latency and drift, and the escalation policy. Start from
// [DefaultSettings]; [Settings.Validate] checks what maker.Config does
// not, [Settings.Apply] and [Settings.Sim] set them in the library's
// settings.
type Settings struct {
	// Margin is the vote's: a fixed k, or auto, each step's k planned
	// from the run's votes by adaptive.Policy at Target, between KFloor
	// and KMax.
	Margin Margin  `flag:"k" usage:"voting margin: a step is decided when one answer leads every other by k votes; auto: each step's k from the run's own votes (see --target)"`
	Target float64 `flag:"target" usage:"with --k auto: the whole run's target success, in (0, 1): a quarter of 1 - target is the steps' failure budget (each step's k keeps the failure charged so far plus the remaining steps' within it, planned over the run's measured spread of difficulty), half the estimates' miss, a quarter a margin for drift before it is seen; when no k up to --k-max keeps it the run stops (or escalates). A bound by the union of the three, under the plan's model (Beta-distributed difficulty, errors that repeat), not an exact figure: hard steps whose errors agree can break it; see docs/calibrate.md"`
	KFloor int     `flag:"k-floor" usage:"with --k auto: smallest k, at least 2 (at k=1 no vote disagrees with its winner, so p cannot be estimated); the default 4 holds a late drop of p from 0.9999 to 0.8 (at k=2 a step before the drop is seen fails 6% of the time, at k=4 0.4%)"`
	KMax   int     `flag:"k-max" usage:"with --k auto: largest k, the first step's (nothing is known yet)"`
	// Parallel, MaxSamples and MaxErrors are vote.Config's, but a
	// MaxErrors of 0 tolerates none (vote.NoErrors), not the default.
	Parallel   int `flag:"parallel" usage:"most samples in flight per step, 1 to k (default k; 1 is the paper's sequential rule; a race never has more than k samples in flight beyond its lead)"`
	MaxSamples int `flag:"max-samples" usage:"valid plus red-flagged samples per step before the step fails (default 100*k)"`
	MaxErrors  int `flag:"max-errors" usage:"provider errors tolerated per step; 0: none, the first failed call fails the step"`
	// MaxTokens, Structured and the prices are maker.Config's.
	MaxTokens   int     `flag:"max-tokens" usage:"reply cap in tokens; a longer reply is red-flagged"`
	Structured  bool    `flag:"structured" usage:"structured output: send the task's answer JSON Schema, so the server constrains each reply to it (openai: and ollama: models)"`
	InputPrice  float64 `flag:"price-in" usage:"dollars per million input tokens, for every model whose --model spec gives no price (default: the built-in list price of a well-known OpenAI or Anthropic model, else 0)"`
	OutputPrice float64 `flag:"price-out" usage:"dollars per million output tokens, as --price-in"`
	// SamplesPerCall is maker.Config.SamplesPerCall's text form: "auto"
	// or a number from 1 to maker.MaxSamplesPerCall.
	SamplesPerCall string `flag:"samples-per-call" usage:"samples per provider request: 1 (one request per sample, the paper's way), N (up to N choices a request, llms n), or auto (a wave's samples of one temperature in one request; a provider that ignores n is detected and served one by one)"`
	// Latency and LatencySigma are the simulated model's
	// (sim.LatencyOf); from step PChangeAt on its P is PLate, when Drift.
	Latency      time.Duration `flag:"latency" usage:"simulated model: latency of a call (the median, with --latency-sigma)"`
	LatencySigma float64       `flag:"latency-sigma" usage:"simulated model: lognormal spread of latency (0 = fixed)"`
	PLate        float64       `flag:"p-late" usage:"simulated model: from step --p-change-at on, the probability that a valid reply is right (a model that drifts late in the run)"`
	PChangeAt    int           `flag:"p-change-at" usage:"simulated model: the step (from 0) where --p becomes --p-late"`
	// Progress is the progress bar's mode (maker/progress); Verbose adds
	// each red-flagged reply and provider error to it.
	Progress progress.Mode `flag:"progress" usage:"progress bar on stderr, with the samples of the step being decided: auto (when stderr is a terminal), on or off"`
	Verbose  bool          `flag:"verbose" usage:"print each red-flagged reply's reason and first characters, and each provider error, on stderr"`
	// Drift says PLate and PChangeAt are set (a command line gave them).
	Drift bool
	// Escalation is the --escalate policy, without its model.
	Escalation
}

// Escalation is maker.Escalation as a command line gives it: Model is
// the --model spec of the escalation model, which the command opens.
type Escalation struct {
	Policy string `flag:"escalate" usage:"what a contested step gets (one still undecided after --escalate-after samples): raise-k (a new race at --escalate-k), model (a new race drawn from --escalate-model) or stop (the run stops, the step marked for review, exit 1)"`
	After  int    `flag:"escalate-after" usage:"with --escalate: samples after which an undecided step is contested (default 4 times its k)"`
	K      int    `flag:"escalate-k" usage:"with --escalate raise-k: the margin of the second race (default twice the step's k)"`
	Model  string `flag:"escalate-model" usage:"with --escalate model: the --model spec of the model that decides contested steps, a model the run does not use (refused if it is one of the run's --model: asking the model whose votes split again makes a hard step's wrong answer win more surely); sim: the simulated model with the same flags and seed+1, so its hard steps are other steps"`
}

// DefaultSettings are the settings of a run that sets none: the vote's,
// adaptive k's and the replies' defaults, one sample a request. Target
// has none: the command's (maker/calibrate's DefaultTarget).
func DefaultSettings() Settings {
	return Settings{Margin: Margin{K: vote.DefaultK}, KFloor: adaptive.DefaultFloor, KMax: adaptive.DefaultMax,
		MaxErrors: vote.DefaultMaxErrors, MaxTokens: maker.DefaultMaxTokens, SamplesPerCall: "1", Progress: progress.Auto}
}

// Margin is the vote's margin as a command line gives it: K, from 1 to
// vote.MaxK, or Auto (K is then 0). Its pointer is a flag value (Set,
// String, Type) whose text is K or "auto".
type Margin struct {
	K    int
	Auto bool
}

// String is "auto", or K.
func (m *Margin) String() string {
	if m.Auto {
		return "auto"
	}
	return strconv.Itoa(m.K)
}

// Set reads "auto" (any case) or a margin from 1 to vote.MaxK; an error
// says which.
func (m *Margin) Set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		*m = Margin{Auto: true}
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > vote.MaxK { // 0 is vote.Config's default: no flag value
		return fmt.Errorf("want a margin from 1 to %d, or auto", vote.MaxK)
	}
	*m = Margin{K: n}
	return nil
}

// Type names the flag's value.
func (m *Margin) Type() string { return "k" }

// KBound is the largest margin a step may have: K, or KMax with Auto.
func (s Settings) KBound() int {
	if s.Margin.Auto {
		return s.KMax
	}
	return s.Margin.K
}

// Adaptive is the Auto margin's policy for a task of steps steps
// (adaptive.Policy, which checks itself in maker.Config.Validate), nil
// with a fixed K.
func (s Settings) Adaptive(steps int) maker.KPolicy {
	if !s.Margin.Auto {
		return nil
	}
	return &adaptive.Policy{Target: s.Target, Floor: s.KFloor, Max: s.KMax, Steps: steps}
}

// Validate checks what maker.Config does not.
//
// Errors: a *fielderr.Error wrapping fielderr.ErrConfig, naming the
// field: a Policy of model without a Model, or a Model with another
// Policy; SamplesPerCall neither auto nor a number from 1 to
// maker.MaxSamplesPerCall, Parallel above the largest margin (KBound),
// MaxErrors below 0, a Progress mode that is not one. Cost: O(1).
func (s Settings) Validate() error {
	k := s.KBound()
	if s.Policy != "" && (s.Model != "") != (s.Policy == maker.EscalateModel) {
		return &fielderr.Error{Config: settingsName, Fields: []fielderr.Field{{Name: "Policy"}}, Clause: "model and Model SPEC go together"}
	}
	if _, err := s.samplesPerCall(); err != nil {
		return err
	}
	switch {
	case s.Parallel > k:
		return fielderr.New(settingsName, "Parallel", s.Parallel, "use 1 to --k ("+strconv.Itoa(k)+"), or 0 for k: a race never has more than k samples in flight beyond its lead, so more would do nothing")
	case s.MaxErrors < 0:
		return fielderr.New(settingsName, "MaxErrors", s.MaxErrors, "use 0 (none tolerated) or more")
	case !s.Progress.Valid():
		return fielderr.New(settingsName, "Progress", string(s.Progress), "use auto, on or off")
	}
	return nil
}

// samplesPerCall is SamplesPerCall's number (maker.SamplesPerCallAuto
// for auto).
func (s Settings) samplesPerCall() (int, error) {
	v := strings.TrimSpace(s.SamplesPerCall)
	if v == "auto" {
		return maker.SamplesPerCallAuto, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maker.MaxSamplesPerCall {
		return 0, fielderr.New(settingsName, "SamplesPerCall", s.SamplesPerCall, "use auto, or a number from 1 to "+strconv.Itoa(maker.MaxSamplesPerCall))
	}
	return n, nil
}

// Apply sets the settings in cfg: the vote's margin and bounds in
// cfg.Vote (its adaptive policy is Adaptive, for the task's steps), the
// replies' cap and price, SamplesPerCall and the
// escalation policy (without its model; nil without a Policy). It does
// not check them: Validate and cfg.Validate do.
func (s Settings) Apply(cfg *maker.Config) {
	cfg.Vote.K = s.Margin.K
	cfg.Vote.Parallel, cfg.Vote.MaxSamples, cfg.Vote.MaxErrors = s.Parallel, s.MaxSamples, s.MaxErrors
	if s.MaxErrors == 0 {
		cfg.Vote.MaxErrors = vote.NoErrors // 0 means none here; in vote.Config it means the default
	}
	cfg.MaxTokens, cfg.Structured = s.MaxTokens, s.Structured
	cfg.Price.InputPerMillion, cfg.Price.OutputPerMillion = s.InputPrice, s.OutputPrice
	cfg.SamplesPerCall, _ = s.samplesPerCall()
	cfg.Escalation = nil
	if s.Policy != "" {
		cfg.Escalation = &maker.Escalation{Policy: s.Policy, After: s.After, K: s.K}
	}
}

// Sim is the simulated model's config c with the settings' latency and
// drift.
func (s Settings) Sim(c sim.Config) sim.Config {
	if s.Drift {
		c.Drift = []sim.PChange{{Step: s.PChangeAt, P: s.PLate}}
	}
	c.Latency = sim.LatencyOf(s.Latency, s.LatencySigma)
	return c
}
