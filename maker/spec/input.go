package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// WithInput returns a copy of s whose initial state has input's fields
// merged in: input is a JSON object, and each of its fields replaces the
// initial state's field of that name or is added to it. It is how one spec
// runs over many inputs (a tasks line's "input", maker solve --inputs).
// The copy is checked as Parse checks a spec (its script against the new
// state included), and its Fingerprint covers the input, so a journal of
// one input never resumes another. s is unchanged.
//
// Errors wrap ErrSpec: input that is not a JSON object, or an initial state
// that is not one (nor absent), and the checks of Parse. Cost: one
// marshal and one Parse of the spec.
func (s *Spec) WithInput(input json.RawMessage) (*Spec, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil || fields == nil || bytes.TrimSpace(input)[0] != '{' {
		return nil, fmt.Errorf("%w: \"input\" must be a JSON object of the initial state's fields to set, such as {\"file\": \"a.txt\"}", ErrSpec)
	}
	state := map[string]json.RawMessage{}
	if init := bytes.TrimSpace(s.InitialState); len(init) > 0 && !bytes.Equal(init, []byte("null")) {
		if init[0] != '{' || json.Unmarshal(init, &state) != nil {
			return nil, fmt.Errorf("%w: \"input\" sets fields of the initial state, but this spec's \"initial_state\" is not a JSON object", ErrSpec)
		}
	}
	for k, v := range fields {
		state[k] = v
	}
	merged, err := json.Marshal(state) // keys sorted: the same input gives the same fingerprint
	if err != nil {
		return nil, fmt.Errorf("%w: \"input\": %w", ErrSpec, err)
	}
	c := *s
	c.InitialState = merged
	raw, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSpec, err)
	}
	out, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("with its \"input\": %w", err)
	}
	return out, nil
}
