// Package spec is a task described by a JSON file: a system prompt, an
// initial state, the answer contract (a JSON Schema), the tools it may use,
// a step limit and when it is done. It also holds, for the simulated model,
// a script of the correct answer at each step.
package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mdap-go/mdap/intent/match"
	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/mdap-go/mdap/internal/schema"
	"github.com/mdap-go/mdap/maker"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrSpec is wrapped by every error about a spec file's content.
var ErrSpec = errors.New("bad task spec")

// Spec is a task file. Only System and Answer are required.
//
//	{
//	  "name": "find-version",
//	  "system": "You find facts in a repository ...",
//	  "initial_state": {"found": null},
//	  "answer": {"type": "object", "required": ["state", "done"], ...},
//	  "tools": ["read_file", "grep"],
//	  "max_steps": 8,
//	  "done_field": "done",
//	  "script": [{"tool_intent": {"tool": "grep", "args": {...}}}, {"state": {...}, "done": true}]
//	}
type Spec struct {
	// Name identifies the task in journals and reports.
	Name string `json:"name"`
	// System is the system prompt: the rules every microagent follows.
	System string `json:"system"`
	// InitialState is the state the first step sees (any JSON).
	InitialState json.RawMessage `json:"initial_state,omitempty"`
	// Answer is the answer contract: a JSON Schema that a step's answer
	// (its value, when it proposes no tool) must satisfy, else the reply is
	// red-flagged. The answer's "state" field becomes the next state.
	Answer json.RawMessage `json:"answer"`
	// Tools are the tools declared to the model. Declaring is not
	// permitting: the run's policy (--tools, read-only by default) decides
	// what may run, and a denied call's reason reaches the next prompt.
	Tools []string `json:"tools,omitempty"`
	// MaxSteps stops the task with an error after that many steps; 0 means
	// DefaultMaxSteps.
	MaxSteps int `json:"max_steps,omitempty"`
	// DoneField names the boolean field of an answer that ends the task
	// when true; default "done".
	DoneField string `json:"done_field,omitempty"`
	// Root is the folder the file tools work in, relative to the folder
	// the run grants (maker run's --root, by default the spec file's
	// folder; a tasks line's or maker solve's --root; the MCP server's
	// root) and inside it: not absolute, no "..". Empty means the granted
	// folder itself. See ResolveRoot.
	Root string `json:"root,omitempty"`
	// Observations is how many of the last tool results the prompt
	// shows, the newest last; 0 means 1 (the last only). At most
	// MaxObservations. With more than one, a task need not copy what a
	// tool said into its state to remember it over the next steps.
	Observations int `json:"observations,omitempty"`
	// ObservationBytes caps each earlier tool result the prompt shows
	// (the last is shown as the executor returned it, within its output
	// cap); 0 means DefaultObservationBytes. A cut result ends with a
	// note that says so.
	ObservationBytes int `json:"observation_bytes,omitempty"`
	// Checker, if set, is a rule that verifies each decided answer
	// before it is applied, independently of the vote (which cannot see
	// errors that agree): a JSON Schema that {"before": STATE, "answer":
	// ANSWER} must satisfy, STATE the state the step was asked in and
	// ANSWER the winning answer (the whole object, "state" and the done
	// field included). A winner it refuses fails the step
	// (maker.ErrRefused), and nothing of it is applied; a step whose
	// winner is a tool call is not checked. The run's report counts the
	// checked steps and the vote-only ones. Put what any single reply
	// must satisfy in "answer" instead: a reply that breaks the contract
	// is red-flagged before it votes.
	Checker json.RawMessage `json:"checker,omitempty"`
	// Script is the correct reply at each step, for the simulated model:
	// an answer object, or {"tool_intent": {...}}; or, for a step that
	// only a model that read the last tool result can answer,
	// {"reply": {...}, "requires_observation": "text"}: the simulated
	// model then answers wrong unless the prompt shows that text.
	Script []ScriptStep `json:"script,omitempty"`

	schema  *jsonschema.Schema
	checker *jsonschema.Schema // nil without a checker
	matcher *match.Matcher     // the answer's x-mdap-match matchers; nil: exact
}

// DefaultMaxSteps is the step limit of a spec that sets none.
const DefaultMaxSteps = 100

// Bounds of a spec's observation history.
const (
	MaxObservations         = 32
	DefaultObservationBytes = 2048
	MaxObservationBytes     = 64 << 10
)

// MaxSpecBytes is the largest spec file Load and Parse read.
const MaxSpecBytes = 1 << 20

// Load reads and checks a spec file. Errors name the file and wrap ErrSpec
// (or the file system's error, or safefile.ErrNotRegular for a FIFO, a
// device or a folder, refused at once without blocking); a file over
// MaxSpecBytes is refused without being read whole.
func Load(path string) (*Spec, error) {
	b, err := safefile.ReadFile(path, MaxSpecBytes)
	if err != nil {
		return nil, err
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse reads and checks a spec from JSON: unknown fields, a missing system
// prompt, an answer contract that is not a valid JSON Schema, a negative
// step limit and a script entry that is not an object are errors wrapping
// ErrSpec.
func Parse(b []byte) (*Spec, error) {
	if len(b) > MaxSpecBytes {
		return nil, fmt.Errorf("%w: the spec is over %d bytes; a spec is a task's rules, not its data: give the data to its tools", ErrSpec, MaxSpecBytes)
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSpec, position(b, err, dec.InputOffset()), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: more data after the spec object; a spec file holds one JSON object", ErrSpec)
	}
	switch {
	case strings.TrimSpace(s.System) == "":
		return nil, fmt.Errorf("%w: \"system\" is empty: say what the microagent must do", ErrSpec)
	case len(s.Answer) == 0:
		return nil, fmt.Errorf("%w: \"answer\" is missing: give a JSON Schema of a step's answer", ErrSpec)
	case s.MaxSteps < 0:
		return nil, fmt.Errorf("%w: \"max_steps\" is %d", ErrSpec, s.MaxSteps)
	case s.Observations < 0 || s.Observations > MaxObservations:
		return nil, fmt.Errorf("%w: \"observations\" is %d: give 1 (the last tool result) to %d", ErrSpec, s.Observations, MaxObservations)
	case s.ObservationBytes < 0 || s.ObservationBytes > MaxObservationBytes:
		return nil, fmt.Errorf("%w: \"observation_bytes\" is %d: give 1 to %d, or leave it out for %d", ErrSpec, s.ObservationBytes, MaxObservationBytes, DefaultObservationBytes)
	case s.Root != "" && (filepath.IsAbs(s.Root) || !filepath.IsLocal(s.Root)):
		return nil, fmt.Errorf("%w: \"root\" is %q: give a folder inside the spec file's folder, such as \"repo\" (a run's --root can name any other)", ErrSpec, s.Root)
	}
	if len(s.InitialState) == 0 {
		s.InitialState = json.RawMessage("null")
	}
	if s.MaxSteps == 0 {
		s.MaxSteps = DefaultMaxSteps
	}
	if s.DoneField == "" {
		s.DoneField = "done"
	}
	// The contract is the spec's own text: no $ref to files or the
	// network, which the fingerprint would not cover.
	var err error
	if s.schema, err = schema.Compile("spec/answer", s.Answer); errors.Is(err, schema.ErrNotJSON) {
		return nil, fmt.Errorf("%w: \"answer\" does not parse: %w", ErrSpec, err)
	} else if err != nil {
		return nil, fmt.Errorf("%w: \"answer\" is not a valid JSON Schema: %w", ErrSpec, err)
	}
	if s.matcher, err = match.New(s.Answer); err != nil {
		return nil, fmt.Errorf("%w: \"answer\": %w", ErrSpec, err)
	}
	if len(s.Checker) > 0 {
		if s.checker, err = schema.Compile("spec/checker", s.Checker); errors.Is(err, schema.ErrNotJSON) {
			return nil, fmt.Errorf("%w: \"checker\" does not parse: %w", ErrSpec, err)
		} else if err != nil {
			return nil, fmt.Errorf("%w: \"checker\" is not a valid JSON Schema of {\"before\": STATE, \"answer\": ANSWER}: %w", ErrSpec, err)
		}
	}
	if err := s.checkScript(); err != nil {
		return nil, err
	}
	return &s, nil
}

// checkScript checks each script step as a run would decode it: an answer
// must satisfy the answer contract. A tool call may name any tool (a
// script may play a model that calls one it was not given, which the
// executor then refuses).
//
// With a checker, each answer of the script must pass it in the state the
// script's earlier answers lead to: the script is the correct trajectory.
func (s *Spec) checkScript() error {
	task := &Task{spec: s, state: s.InitialState}
	for i, st := range s.Script {
		out, err := task.Decode(maker.Reply{Text: string(st.Reply)})
		if err != nil {
			return fmt.Errorf("%w: \"script\" step %d does not match the answer contract, so a model that answered it would be red-flagged: %w", ErrSpec, i, err)
		}
		if _, err := task.check(out); err != nil {
			return fmt.Errorf("%w: \"script\" step %d: its checker refuses the script's answer: %w", ErrSpec, i, err)
		}
		if m, ok := out.Value.(map[string]any); ok {
			if v, ok := m["state"]; ok {
				if task.state, err = json.Marshal(v); err != nil {
					return fmt.Errorf("%w: \"script\" step %d: %w", ErrSpec, i, err)
				}
			}
		}
	}
	return nil
}
