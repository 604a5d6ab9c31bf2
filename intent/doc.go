// Package intent defines what a microagent says for one step, an [Output]
// with an optional [ToolIntent], how it is read from a model's reply
// ([Parse], [FromToolCalls]), and when two replies mean the same step: their
// [Key], a hash of their canonical form ([Canonical]). It also holds what
// comes back to a microagent after its tool intent ran, an [Observation],
// so that tasks can read one without depending on the executor.
//
// Everything here is a pure function of its input: safe for concurrent use,
// deterministic, no I/O.
//
// # Reading a reply
//
// [Parse] finds the answer in fenced ```json / ```JSON / bare ``` blocks, in
// a reply that is one JSON value, or in JSON objects inline in prose
// (`The move is {"move":[1,0,2]} done.`). Every candidate must decode and
// all must agree: the same answer restated (fenced, then inline, in another
// key order or number spelling, with another rationale) is one answer; two
// different answers are [ErrAmbiguous]. Prompts should therefore ask for
// exactly one JSON answer and no example objects in prose. JSON inside
// fences of another language (```python) is ignored.
//
// The JSON decoder is strict where laxness would let different texts vote
// together or change the data a caller re-marshals: duplicate object keys,
// invalid UTF-8, lone UTF-16 surrogate escapes, numbers out of range (a
// scientific exponent beyond ±999,999,999, see [CanonicalNumber]) and
// nesting deeper than [MaxDepth] (512) are [ErrMalformed].
// Otherwise it accepts exactly RFC 8259 JSON (FuzzParse checks it against
// encoding/json).
//
// # Tool intents
//
// A reply proposes a tool call as {"tool_intent":{"tool":...,"args":{...},
// "rationale":...}} (name also spelled tool_name or name, arguments also
// args or arguments), optionally beside answer keys, which then form
// Value; or as a bare {"tool_name":...,"arguments":{...}} (also tool/args,
// plus rationale, and no other key). An object with other keys is a plain
// Value, so {"tool":"hammer","count":3} is an answer, not an intent.
// A "rationale" beside "tool_intent" is the intent's rationale, exactly
// like the one inside it: never part of Value or of the key (it fills
// Intent.Rationale when the inner one is empty), so a model that adds one
// habitually does not make every sample unique. Elsewhere "rationale" is an
// ordinary answer key.
// Healing: arguments given as a string that holds a JSON object are decoded
// once, before anything else; any other string fails as [ErrInvalidIntent].
// Absent, null, "" and "null" arguments mean no arguments.
//
// [FromToolCalls] reads langchaingo's native tool calls to the very same
// Output, so a native call and the same call written as JSON text vote
// together. Beware: langchaingo v0.1.14's llms.ToolCall JSON round trip
// (MarshalJSON then UnmarshalJSON) silently drops the function name and
// arguments; never persist tool calls through it.
//
// # Values
//
// Value holds only map[string]any, []any, string, bool, nil and
// [encoding/json.Number], whose text is canonical ([CanonicalNumber]):
// every number is stored by its exact decimal value (1, 1.0 and 1e0 are
// "1"; 2^53+1 stays 9007199254740993). [Output.DecodeValue] stores Value in
// the caller's own type without loss (json.Marshal then json.Unmarshal does
// the same, but for numbers decoded into interfaces); integers of up to 21
// digits are plain integers, so they fit Go integer fields. Parsed Outputs
// with the same key have deeply equal Values and Args.
//
// # Keys and the canonical form
//
// The canonical form is an explicitly typed tree: each JSON value has its
// own kind (null, false, true, number, string, array, object); numbers
// carry their canonical text; arrays are ordered; objects are sorted by
// key. On top, the form keeps "value only", "intent only" and "both" apart
// and leaves Rationale out. [Canonical] writes it as JSON text (sorted
// keys, no white space, canonical numbers), an injective encoding of the
// form, and [Key] hashes that text and nothing else: Key(o) ==
// KeyOf(Canonical(o)), the FNV-1a hash of the text computed through
// hashstructure/v2, never 0. So two Outputs have the same key exactly when
// they have the same canonical text (up to a 2^-64 chance of collision per
// pair). Raw decoded JSON is never hashed: hashstructure hashes nil like
// 0, int(1) unlike float64(1), and XORs sets so duplicates cancel.
//
// Same key: key order, white space, 1 / 1.0 / 1e0 / 10e-1, -0 / 0, fenced /
// inline / whole-reply / native, any rationale (inside or beside the
// intent), nil / empty Args, and beside an intent no Value / a JSON null
// Value (nil map, nil slice) / an empty object Value. Different key: null /
// 0 / false / "" / [] / {}, "1" / 1, [a,a] / [a] / [], [a,b] / [b,a],
// another tool, another argument name or value, Value only / Intent only /
// both.
//
// Canonical numbers follow ECMAScript's Number::toString layout applied to
// the exact decimal digits, never rounded: 100, 1.5, 0.000001, 1e-7,
// 1e+21, 1.2345678901234567890123e+22.
//
// Keys are deterministic across processes and platforms, but belong to
// this version of the canonical form: TestKeyGolden pins some values, and a
// change to them is a breaking change for anything that compares keys
// across builds.
//
// # Cost
//
// Everything here is linear in the size of its input. Key costs one
// canonicalisation plus one pass of FNV-1a over the text, a handful of
// small allocations; for figures, run go test -bench . ./intent or see the
// benchmark report in benchmarks/results.
//
// # Errors
//
// Every error of Parse, FromToolCalls, Key and Canonical wraps exactly one
// of [ErrNoAnswer], [ErrMalformed], [ErrAmbiguous] and [ErrInvalidIntent],
// and says what was wrong and where (byte offsets into the original reply).
// Upstream, each is a red flag: the sample is discarded and resampled and
// never votes. [Output.DecodeValue] adds [ErrDecode] for a Value that does
// not fit the caller's type.
//
// # Robustness
//
// Parse, FromToolCalls, Key, Canonical, CanonicalNumber and DecodeValue
// never panic. Parse runs in time linear in its input whatever the content
// (TestParseHostileInputs feeds it 1 MiB of '{', of '[', of backticks and of
// fence lines), and nothing recurses deeper than MaxDepth, including
// hand-built cyclic Values given to Key. FuzzParse and FuzzKey check this
// and the round trip Key(Parse(Canonical(o))) == Key(o); FuzzCanonicalNumber
// checks the number canonicaliser against encoding/json, strconv and
// math/big.
package intent
