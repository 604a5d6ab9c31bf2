package maker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/tmc/langchaingo/llms"
)

// Settings are what determine a run's answers besides the task: the model,
// the margin, the reply cap, the red flags, the temperature schedule, the
// tools declared to the model and the other call options. A journal's
// header records them, and a resume with different settings is refused
// with journal.ErrMismatch, naming every field that differs.
//
// The budgets (MaxSamples, MaxErrors) and Parallel are deliberately not
// settings: they never change a decided step, so a run that spent its
// budget can resume with a larger one.
type Settings struct {
	// Model is the model's identity (see ModelIdentity).
	Model string `json:"model"`
	// K is the voting margin; 0 when KAuto chooses it per step.
	K int `json:"k"`
	// KAuto is the k policy (Config.AdaptiveK) with its defaults, as
	// it records itself (KPolicy.Record); nil for a fixed k.
	KAuto json.RawMessage `json:"k_auto,omitempty"`
	// MaxTokens is the reply cap sent with every call.
	MaxTokens int `json:"max_tokens"`
	// Flags are the red-flag rules.
	Flags FlagRules `json:"flags"`
	// Temperature is the schedule's value for samples 0 to 7: a schedule
	// is a function, so the journal keeps its first values.
	Temperature []float64 `json:"temperature"`
	// Tools names each declared tool with a digest of its definition.
	Tools []string `json:"tools"`
	// ToolDeclaration is how the tools were declared (native, prompt or
	// both, as resolved for the model); empty without tools.
	ToolDeclaration ToolDeclaration `json:"tool_declaration,omitempty"`
	// CallOptions is the JSON of the call options beyond the above, as
	// applied to an llms.CallOptions.
	CallOptions string `json:"call_options"`
	// Extra holds what the caller adds (Solver.Settings).
	Extra map[string]string `json:"extra,omitempty"`

	// describe is the run's KPolicy.Describe, which names a KAuto record
	// in Diff; nil: the JSON names it.
	describe func(json.RawMessage) string
}

// temperatureProbes is how many samples' temperatures Settings records.
const temperatureProbes = 8

// Identifier is implemented by models that can name themselves, with
// whatever makes their answers what they are (a provider and model name,
// a server, a seed), and no secret. The solver records the identity in the
// journal, so a run resumed with another model is refused.
type Identifier interface {
	Identity() string
}

// ModelIdentity names m for the journal: m.Identity() if m is an
// Identifier, otherwise its Go type (so two models of different types are
// told apart, but two of the same type are not: give such models an
// Identity, or put what tells them apart in Solver.Settings).
func ModelIdentity(m llms.Model) string {
	if id, ok := m.(Identifier); ok {
		return id.Identity()
	}
	return fmt.Sprintf("%T", m)
}

// settings returns the Settings this solver runs with at margin k.
func (s *Solver) settings(k int) (Settings, error) {
	temp := s.temperature()
	st := Settings{
		Model:       ModelIdentity(s.Model),
		K:           k,
		MaxTokens:   s.maxTokens(),
		Flags:       s.Flags,
		Temperature: make([]float64, temperatureProbes),
		Tools:       make([]string, 0, len(s.Tools)),
		Extra:       maps.Clone(s.Settings),
	}
	for i := range st.Temperature {
		st.Temperature[i] = temp(i)
	}
	if w := s.Writes.setting(); w != "" {
		st.setExtra("write_rule", w)
	}
	if s.ToolFirst {
		st.setExtra("tool_first", "on")
	}
	if a := s.FlagAlarm.setting(); a != "" {
		st.setExtra("flag_alarm", a)
	}
	if s.AdaptiveK != nil {
		rec, err := s.AdaptiveK.Record()
		if err != nil {
			return Settings{}, err
		}
		st.K, st.KAuto, st.describe = 0, rec, s.AdaptiveK.Describe
	}
	for _, t := range s.Tools {
		b, err := json.Marshal(t)
		if err != nil {
			return Settings{}, fmt.Errorf("maker: declared tool cannot be recorded: %w", err)
		}
		sum := sha256.Sum256(b)
		name := t.Type
		if t.Function != nil {
			name = t.Function.Name
		}
		st.Tools = append(st.Tools, name+"@"+hex.EncodeToString(sum[:6]))
	}
	_, _, mode, err := s.declaration()
	if err != nil {
		return Settings{}, err
	}
	st.ToolDeclaration = mode
	var opts llms.CallOptions
	for _, o := range s.CallOptions {
		o(&opts)
	}
	b, err := json.Marshal(opts)
	if err != nil {
		return Settings{}, fmt.Errorf("maker: call options cannot be recorded: %w", err)
	}
	st.CallOptions = string(b)
	return st, nil
}

// setExtra sets Extra[k] to v, making the map if need be.
func (s *Settings) setExtra(k, v string) {
	if s.Extra == nil {
		s.Extra = map[string]string{}
	}
	s.Extra[k] = v
}

// Diff names every field in which o differs from s, worded for a person:
// `k: 3 in the journal, 5 now`. It returns nil when they are equal.
func (s Settings) Diff(o Settings) []string {
	var out []string
	field := func(name string, was, now any) {
		if fmt.Sprint(was) != fmt.Sprint(now) {
			out = append(out, fmt.Sprintf("%s: %v in the journal, %v now", name, quote(was), quote(now)))
		}
	}
	field("model", s.Model, o.Model)
	field("k", s.K, o.K)
	if !bytes.Equal(s.KAuto, o.KAuto) {
		out = append(out, fmt.Sprintf("k_auto: %s in the journal, %s now", o.kAuto(s.KAuto), o.kAuto(o.KAuto)))
	}
	field("max_tokens", s.MaxTokens, o.MaxTokens)
	field("flags", s.Flags, o.Flags)
	field("temperature", s.Temperature, o.Temperature)
	field("tools", s.Tools, o.Tools)
	field("tool_declaration", s.ToolDeclaration, o.ToolDeclaration)
	field("call_options", s.CallOptions, o.CallOptions)
	keys := append(slices.Collect(maps.Keys(s.Extra)), slices.Collect(maps.Keys(o.Extra))...)
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		was, okWas := s.Extra[k]
		now, okNow := o.Extra[k]
		if okWas != okNow || was != now {
			out = append(out, fmt.Sprintf("%s: %s in the journal, %s now", k, extra(was, okWas), extra(now, okNow)))
		}
	}
	return out
}

// extra is an Extra value as Diff words it.
func extra(v string, set bool) string {
	if !set {
		return "not set"
	}
	return fmt.Sprintf("%q", v)
}

// DiffJSON is Diff against settings recorded as JSON (a journal's
// header), as journal.Run's Diff; its error is the recorded settings'
// decoding error.
func (s Settings) DiffJSON(recorded json.RawMessage) ([]string, error) {
	var was Settings // a header without settings recorded the zero value
	if len(recorded) > 0 {
		if err := json.Unmarshal(recorded, &was); err != nil {
			return nil, err
		}
	}
	return was.Diff(s), nil
}

// kAuto names a k policy's record as s's policy describes it, or "none".
func (s Settings) kAuto(rec json.RawMessage) string {
	switch {
	case rec == nil:
		return "none"
	case s.describe != nil:
		return s.describe(rec)
	}
	return string(rec)
}

func quote(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}
