package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/maker/sim"
)

// ErrNoScript: the spec has no scripted reply for the prompt's step.
var ErrNoScript = errors.New("no scripted reply for this step")

// Oracle answers a spec task's prompts for the simulated model (it is a
// sim.Oracle): the correct reply at step n is the script's n-th reply; a
// wrong reply is the same reply with one leaf changed (sim.MutateJSON), so
// it is well formed and votes against the right one. A script step that
// requires an observation (see Spec.Script) is answered wrong, as if by a
// model that never saw the tool's result, when the prompt lacks the text
// it requires: so a run whose observations do not reach the next prompt
// ends in the wrong state.
type Oracle struct{ Spec *Spec }

// Check is sim.Checker's: the simulated model answers a spec task from
// its script, so a spec with none is refused (ErrSpec) before any draw.
func (o Oracle) Check() error {
	if len(o.Spec.Script) == 0 {
		return fmt.Errorf("%w: \"script\" is missing: the simulated model answers a spec task from its script; add a \"script\" of the correct replies, or use a real model", ErrSpec)
	}
	return nil
}

var stepRE = regexp.MustCompile(`(?m)^Step: (\d+)$`)

func (o Oracle) scripted(q sim.Query) (string, error) {
	m := stepRE.FindStringSubmatch(q.Prompt)
	if m == nil {
		return "", fmt.Errorf("%w: the prompt has no \"Step:\" line", ErrNoScript)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n >= len(o.Spec.Script) {
		return "", fmt.Errorf("%w: step %s, the script has %d", ErrNoScript, m[1], len(o.Spec.Script))
	}
	st := o.Spec.Script[n]
	reply := string(st.Reply)
	if st.RequiresObservation != "" && !strings.Contains(q.Prompt, st.RequiresObservation) {
		return sim.MutateJSON(reply, 1<<20)
	}
	return reply, nil
}

// Correct returns the script's reply for the prompt's step.
func (o Oracle) Correct(q sim.Query) (string, error) { return o.scripted(q) }

// Wrong returns the script's reply with one leaf changed by variant.
func (o Oracle) Wrong(q sim.Query, variant int) (string, error) {
	text, err := o.scripted(q)
	if err != nil {
		return "", err
	}
	return sim.MutateJSON(text, variant)
}

// ScriptStep is one step of a spec's script: the correct reply and,
// optionally, a text the step's prompt must show (a tool's result) for
// the simulated model to know that reply.
type ScriptStep struct {
	Reply               json.RawMessage
	RequiresObservation string
}

// UnmarshalJSON reads a script step: a reply object, or an object with
// exactly the keys "reply" and "requires_observation".
func (s *ScriptStep) UnmarshalJSON(b []byte) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return fmt.Errorf("a script step must be an object, not %s", abbreviate(b))
	}
	req, hasReq := obj["requires_observation"]
	reply, hasReply := obj["reply"]
	if hasReq && hasReply && len(obj) == 2 {
		if err := json.Unmarshal(req, &s.RequiresObservation); err != nil {
			return fmt.Errorf("\"requires_observation\" must be a string: %w", err)
		}
		if json.Unmarshal(reply, &map[string]json.RawMessage{}) != nil {
			return fmt.Errorf("\"reply\" must be an object, not %s", abbreviate(reply))
		}
		s.Reply = reply
		return nil
	}
	s.Reply = bytes.Clone(b)
	return nil
}

// MarshalJSON writes the step as it was read.
func (s ScriptStep) MarshalJSON() ([]byte, error) {
	if s.RequiresObservation == "" {
		return s.Reply, nil
	}
	return json.Marshal(struct {
		Reply               json.RawMessage `json:"reply"`
		RequiresObservation string          `json:"requires_observation"`
	}{s.Reply, s.RequiresObservation})
}

func abbreviate(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
