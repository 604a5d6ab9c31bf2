package intent

import "errors"

// The sentinel errors of this package. Every error returned by this package
// ([Parse], [FromToolCalls], [Key], [Canonical], [CanonicalNumber],
// [Output.DecodeValue]) wraps exactly one of them (test with [errors.Is]) and
// its message says what was wrong and where. Upstream, each one is a red
// flag: the sample is discarded and resampled, it never votes.
var (
	// ErrNoAnswer: the reply is empty or holds nothing JSON-like (no fenced
	// JSON block, no JSON object, and the whole reply is not one JSON value);
	// or the answer found is JSON null; or a native step has no tool call;
	// or DecodeValue was given an Output without a Value.
	ErrNoAnswer = errors.New("no answer")

	// ErrMalformed: a JSON candidate does not decode: bad syntax, trailing
	// data, a duplicate object key, a string that is not valid UTF-8 (or a
	// lone UTF-16 surrogate escape), a number out of range (see
	// CanonicalNumber), or nesting deeper than [MaxDepth]. Key, Canonical
	// and DecodeValue also report it for a hand-built Output holding a
	// value that is not JSON (NaN, a channel, ...); CanonicalNumber for a
	// text that is not a JSON number.
	ErrMalformed = errors.New("malformed JSON")

	// ErrAmbiguous: a reply holds two different answers (two JSON candidates
	// with different canonical forms), a native step holds more than one tool
	// call, or a hand-built Output cannot be written as a single reply (see
	// [Canonical]).
	ErrAmbiguous = errors.New("ambiguous answer")

	// ErrInvalidIntent: a tool intent is not well formed: no tool name, an
	// empty or non-string name, two spellings of the name or of the
	// arguments at once, arguments that are not a JSON object (after
	// healing), a non-string rationale (inside "tool_intent" or beside it),
	// an unknown key inside "tool_intent", or a native tool call without a
	// function.
	ErrInvalidIntent = errors.New("invalid tool intent")

	// ErrDecode: [Output.DecodeValue] could not store the Value in the
	// caller's type (the encoding/json error is wrapped too). Parse, Key
	// and the other functions above never return it.
	ErrDecode = errors.New("value does not decode")
)
