package spec

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tmc/langchaingo/llms"
)

// Task runs a Spec: a maker.Task whose state is the JSON value of the last
// answer's "state" field.
type Task struct {
	spec    *Spec
	fp      string
	state   json.RawMessage
	step    int
	done    bool
	history []pastObservation // the earlier tool results the prompt shows, oldest first
}

// pastObservation is a tool result kept for later prompts, already cut
// to the spec's observation_bytes.
type pastObservation struct {
	Step int    `json:"step"`
	Text string `json:"text"`
}

// New returns a task at its initial state. The spec must come from Load or
// Parse.
func New(s *Spec) *Task {
	raw, _ := json.Marshal(s) // a Spec always marshals
	sum := sha256.Sum256(raw)
	name := s.Name
	if name == "" {
		name = "unnamed"
	}
	return &Task{spec: s, fp: "spec:" + name + ":" + hex.EncodeToString(sum[:8]), state: s.InitialState}
}

// Fingerprint names the task and a hash of its whole spec.
func (t *Task) Fingerprint() string { return t.fp }

// TaskVersion implements maker.TaskVersioner: the version of how this
// package turns a spec into prompts and applies winners (the spec's own
// content is in the Fingerprint), raised when a change could change a
// step's winner. A spec whose answer declares matchers (x-mdap-match) is
// "spec/2": before them, such an annotation was ignored, so a journal
// written then must not resume under matching.
func (t *Task) TaskVersion() string {
	if t.spec.matcher != nil {
		return "spec/2"
	}
	return "spec/1"
}

// State returns the current state as JSON.
func (t *Task) State() json.RawMessage { return t.state }

// Steps returns the number of steps applied.
func (t *Task) Steps() int { return t.step }

// Done reports whether an answer said the task is done.
func (t *Task) Done() bool { return t.done }

// Prompt shows the system prompt with the answer contract, then the step
// number, the state, the earlier tool results the spec keeps (its
// "observations" minus one, oldest first, each cut to
// "observation_bytes") and the last tool observation.
func (t *Task) Prompt(last *intent.Observation) []llms.MessageContent {
	var sys strings.Builder
	sys.WriteString(t.spec.System)
	fmt.Fprintf(&sys, "\n\nReply with exactly one JSON object: either your answer, which must satisfy this JSON Schema:\n%s\n", t.spec.Answer)
	fmt.Fprintf(&sys, "Put the new state in \"state\" and set %q to true when the task is finished.\n", t.spec.DoneField)
	if len(t.spec.Tools) > 0 {
		fmt.Fprintf(&sys, "Or, to use a tool (%s), reply {\"tool_intent\": {\"tool\": NAME, \"args\": {...}}}; its result comes in the next step.\n", strings.Join(t.spec.Tools, ", "))
	}
	var user strings.Builder
	fmt.Fprintf(&user, "Step: %d\nState: %s\n", t.step, t.state)
	if earlier := t.earlier(); len(earlier) > 0 {
		user.WriteString("Earlier tool results, oldest first:\n")
		for _, o := range earlier {
			fmt.Fprintf(&user, "[after step %d]\n%s\n", o.Step, o.Text)
		}
	}
	if last != nil {
		fmt.Fprintf(&user, "Last tool result:\n%s\n", last.Text())
	}
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, sys.String()),
		llms.TextParts(llms.ChatMessageTypeHuman, user.String()),
	}
}

// Decode parses a reply and checks its answer against the contract; a
// reply that proposes a tool call without an answer passes (the executor
// decides whether it may run). Safe for concurrent use.
func (t *Task) Decode(r maker.Reply) (intent.Output, error) {
	out, err := maker.DecodeReply(r)
	if err != nil {
		return out, err
	}
	if out.Value == nil {
		if out.Intent == nil {
			return out, fmt.Errorf("%w: no answer and no tool call", maker.ErrFormat)
		}
		return out, nil
	}
	if err := t.spec.schema.Validate(out.Value); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return out, fmt.Errorf("%w: the answer breaks its contract: %s", maker.ErrFormat, ve.Error())
		}
		return out, fmt.Errorf("%w: %w", maker.ErrFormat, err)
	}
	return out, nil
}

// Apply takes the winner's "state" as the new state and its done field as
// the end. A winner that only proposes a tool call leaves the state alone:
// the observation reaches the next prompt, and with "observations" above
// one it is kept for the prompts after that. Past max_steps without being
// done, Apply fails with an error wrapping maker.ErrStepLimit.
func (t *Task) Apply(w intent.Output, obs *intent.Observation) (bool, error) {
	if obs != nil && t.keep() > 1 {
		t.history = append(t.history, pastObservation{Step: t.step, Text: capText(obs.Text(), t.observationBytes())})
		if n := t.keep() - 1; len(t.history) > n {
			// The newest is the next prompt's last result; the n before
			// it are the earlier ones it shows.
			t.history = slices.Clone(t.history[len(t.history)-n-1:])
		}
	}
	t.step++
	if m, ok := w.Value.(map[string]any); ok {
		if st, ok := m["state"]; ok {
			raw, err := json.Marshal(st)
			if err != nil {
				return false, err
			}
			t.state = raw
		}
		t.done = m[t.spec.DoneField] == true
	}
	if !t.done && t.step >= t.spec.MaxSteps {
		return false, fmt.Errorf("%w: the spec's max_steps is %d and the task is not done", maker.ErrStepLimit, t.spec.MaxSteps)
	}
	return t.done, nil
}

var _ maker.Verifier = (*Task)(nil)

// Verify implements maker.Verifier with the spec's "checker": an answer
// (a winner with a value) is checked against it in the current state; a
// tool call, or any winner of a spec without a checker, is vote-only.
// The error names what the checker refused. Safe for concurrent use.
func (t *Task) Verify(_ context.Context, w intent.Output) (bool, error) {
	return t.check(w)
}

// check validates {"before": state, "answer": w's value} against the
// checker.
func (t *Task) check(w intent.Output) (bool, error) {
	if t.spec.checker == nil || w.Value == nil {
		return false, nil
	}
	var before any
	if err := json.Unmarshal(t.state, &before); err != nil {
		return true, fmt.Errorf("the state is not JSON: %w", err)
	}
	doc, err := roundTrip(map[string]any{"before": before, "answer": w.Value})
	if err != nil {
		return true, err
	}
	if err := t.spec.checker.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return true, fmt.Errorf("checker: %s", ve.Error())
		}
		return true, fmt.Errorf("checker: %w", err)
	}
	return true, nil
}

// roundTrip gives v as the jsonschema package reads a JSON document:
// numbers as json.Number, objects as map[string]any.
func roundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// keep is how many tool results the prompt shows.
func (t *Task) keep() int { return max(t.spec.Observations, 1) }

func (t *Task) observationBytes() int {
	if t.spec.ObservationBytes > 0 {
		return t.spec.ObservationBytes
	}
	return DefaultObservationBytes
}

// earlier returns the earlier tool results the next prompt shows: the
// kept ones but the newest, which the prompt shows as the last result
// (the solver passes it to Prompt).
func (t *Task) earlier() []pastObservation {
	if len(t.history) < 2 {
		return nil
	}
	return t.history[:len(t.history)-1]
}

// capText cuts s to at most n bytes on a UTF-8 boundary, saying so.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[cut: %d of %d bytes shown]", cut, len(s))
}

// snapshot is a Task's state in a journal checkpoint.
type snapshot struct {
	State   json.RawMessage   `json:"state"`
	Step    int               `json:"step"`
	Done    bool              `json:"done"`
	History []pastObservation `json:"history,omitempty"`
}

// Snapshot implements maker.Snapshotter: the state, the step count and
// whether the task is done.
func (t *Task) Snapshot() (json.RawMessage, error) {
	return json.Marshal(snapshot{State: t.state, Step: t.step, Done: t.done, History: t.history})
}

// Restore implements maker.Snapshotter.
func (t *Task) Restore(b json.RawMessage) error {
	var s snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("spec: bad snapshot: %w", err)
	}
	t.state, t.step, t.done, t.history = s.State, s.Step, s.Done, s.History
	return nil
}

var _ maker.StructuredTask = (*Task)(nil)

// AnswerSchema implements maker.StructuredTask: the spec's answer
// contract; for a spec that declares tools, either the contract or a
// {"tool_intent": {"tool": NAME, "args": {...}}} object naming one of
// them (an anyOf, which an OpenAI-compatible server reached through
// langchaingo gets as a request for a JSON object only: see
// maker/models).
func (t *Task) AnswerSchema() json.RawMessage {
	if len(t.spec.Tools) == 0 {
		return t.spec.Answer
	}
	intent := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"tool_intent": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"tool": map[string]any{"type": "string", "enum": t.spec.Tools},
					"args": map[string]any{"type": "object"},
				},
				"required": []string{"tool", "args"},
			},
		},
		"required":             []string{"tool_intent"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(map[string]any{"anyOf": []any{t.spec.Answer, intent}}) // RawMessage, maps and strings always marshal
	return b
}
