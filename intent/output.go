package intent

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ToolIntent is a microagent's proposal of one tool call. A microagent never
// runs a tool: it proposes one, the proposals are voted on like any answer,
// and only the winning call is executed (by package executor, which checks
// the tool's registration, category and arguments; nothing here does).
//
// Rationale is free text for humans and logs; it never takes part in the key,
// so two samples that propose the same call for different stated reasons vote
// together. Parse reads it from inside "tool_intent" or, when that one is
// empty, from a "rationale" beside it.
type ToolIntent struct {
	// Tool is the name of the tool to call, for example "read_file". Parse
	// and FromToolCalls guarantee a non-empty string; it is not trimmed or
	// checked against any registry.
	Tool string `json:"tool"`
	// Args holds the call's arguments as decoded JSON values (the types
	// listed on Output). Parse and FromToolCalls always return a non-nil
	// map, empty for a call without arguments; Key treats nil and empty
	// alike.
	Args map[string]any `json:"args"`
	// Rationale is why the microagent proposes the call. Ignored by Key and
	// Canonical; when a reply repeats an intent, Parse keeps the first one.
	Rationale string `json:"rationale,omitempty"`
}

// Output is what one microagent sample says about one step: a structured
// answer, a tool intent, or both. Parse and FromToolCalls never return an
// Output with neither.
//
// Value is the step's answer as decoded JSON, made only of these types:
// map[string]any, []any, string, bool, nil (JSON null, inside a container)
// and [encoding/json.Number] for every number, holding its canonical text
// ("1" for 1, 1.0 and 1e0; "12345678901234567890" exactly, never rounded
// through float64). Use Number.Int64 or Number.Float64 to read one, or
// json.Marshal(Value) and json.Unmarshal into your own struct: that round
// trip is lossless, and integers of up to 21 digits are written as plain
// integers, so they unmarshal into Go integer fields; [Output.DecodeValue]
// does it in one call. For example,
// {"move":[1,0,2],"next_state":[[2,3],[],[1]]}. Value is nil when the reply
// holds only a tool intent; when an Intent is present, Value, if any, is an
// object (the reply's keys other than "tool_intent").
//
// Intent is nil when the sample proposes no tool call.
//
// Two Outputs returned by Parse or FromToolCalls with the same [Key] have
// deeply equal Values and Args (reflect.DeepEqual), whatever the spelling of
// the replies they came from. Hand-built Outputs may use other Go types
// (int, float64, structs, ...); Key and Canonical read them as
// encoding/json would marshal them. So a task's own answer type may be a
// Value (as a maker.VoteKeyer's DecodeKey may return it): a value that
// encoding/json marshals to the text T (a json.Marshaler, say) has the
// Key, the Canonical text and the DecodeValue result of the decoded form
// of T as Parse would return it, maps, lists and json.Numbers
// (FuzzMarshalerValueIsItsMap).
type Output struct {
	Value  any         `json:"value,omitempty"`
	Intent *ToolIntent `json:"tool_intent,omitempty"`
}

// DecodeValue stores o's Value in v, which must be a non-nil pointer, as
// [encoding/json.Unmarshal] would store the Value's canonical JSON text
// (see [Canonical]), with one difference: numbers decoded into an interface
// (any, map[string]any, ...) are [encoding/json.Number] holding their
// canonical text, never float64, so nothing is rounded. Into Go integer
// fields, integers of up to 21 digits decode exactly when they fit (larger
// ones are written with an exponent, which encoding/json refuses for
// integers); into float64 fields they are correctly rounded. Unknown object
// keys are ignored, as encoding/json does; Intent plays no part.
//
// Errors: [ErrNoAnswer] when Value is nil or JSON null (a nil map, a nil
// slice, ...); [ErrMalformed] when a hand-built Value is not JSON (see
// [Canonical]); otherwise [ErrDecode], also wrapping encoding/json's error
// (a *json.UnmarshalTypeError for a type mismatch, a
// *json.InvalidUnmarshalError when v is not a non-nil pointer). Cost: one
// canonicalisation and one encoding/json decode of the Value.
func (o Output) DecodeValue(v any) error {
	if o.Value == nil {
		return fmt.Errorf("%w: the output has no value to decode", ErrNoAnswer)
	}
	n, err := toNode(o.Value, 0)
	if err != nil {
		return fmt.Errorf("%w: value: %w", ErrMalformed, err)
	}
	if n.Kind == kindNull {
		return fmt.Errorf("%w: the value is JSON null", ErrNoAnswer)
	}
	dec := json.NewDecoder(bytes.NewReader(appendNode(nil, &n)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrDecode, err)
	}
	return nil
}
