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
// invalid UTF-8, lone UTF-16 surrogate escapes, exponents of more than 9
// digits and nesting deeper than [MaxDepth] (512) are [ErrMalformed].
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
// [encoding/json.Number], whose text is canonical: every number is stored
// by its exact decimal value (1, 1.0 and 1e0 are "1"; 2^53+1 stays
// 9007199254740993). json.Marshal(Value) followed by json.Unmarshal into
// the caller's own struct is lossless; integers of up to 21 digits are
// plain integers, so they fit Go integer fields. Parsed Outputs with the
// same key have deeply equal Values and Args.
//
// # Keys and the canonical form
//
// The canonical form is an explicitly typed tree: each JSON value is a
// node {Kind, Str, Keys, Items} with its own Kind for null, false, true,
// number, string, array and object; numbers carry their canonical text;
// arrays are ordered slices; objects are key-sorted parallel slices. On
// top, a form {HasValue, Value, HasIntent, Tool, Args} keeps "value only",
// "intent only" and "both" apart and leaves Rationale out. [Key] hashes
// that form with hashstructure/v2 (FNV-64, FormatV2); [Canonical] writes it
// as JSON text (sorted keys, no white space, canonical numbers). Raw
// decoded JSON is never hashed: hashstructure hashes nil like 0, int(1)
// unlike float64(1), and XORs sets so duplicates cancel.
//
// Same key: key order, white space, 1 / 1.0 / 1e0 / 10e-1, -0 / 0, fenced /
// inline / whole-reply / native, any rationale, nil / empty Args, and
// beside an intent a nil Value / an empty object Value. Different key: null
// / 0 / false / "" / [] / {}, "1" / 1, [a,a] / [a] / [], [a,b] / [b,a],
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
// # Cost and the choice of hash
//
// Measured on the 2-vCPU Xeon this package was developed on (go test
// -bench=. ./intent; the median of 3 runs):
//
//	                              Parse              Key (hashstructure)  Canonical+SHA-256
//	Hanoi step, 3 disks (59 B)    0.9 µs, 23 allocs  14.6 µs, 449 allocs  0.8 µs, 10 allocs
//	Hanoi step, 20 disks, fenced  2.2 µs, 44 allocs  31.6 µs, 993 allocs  1.7 µs, 11 allocs
//	tool intent, fenced (235 B)   1.8 µs, 14 allocs   5.4 µs, 163 allocs  0.5 µs,  7 allocs
//	overlong reply (40 KB)        3.8 µs, 23 allocs
//	native call (FromToolCalls)   0.3 µs,  6 allocs
//
// Key is hashstructure/v2 over the typed node tree, as the design asks:
// its guarantees are plain to see in the node type, and its cost, 5 to
// 32 µs per sample, is nothing next to a model call (milliseconds to
// seconds). It is, however, 10 to 20 times the cost of SHA-256 over the
// canonical text, because hashstructure walks every node and field through
// reflection and allocates for each: on the simulated model at 20 disks
// Key can be the largest CPU cost per sample. If that ever matters, hashing
// a struct of the canonical texts ({HasValue, Value string, HasIntent,
// Tool, Args string}) through hashstructure measured 1.6 µs with the same
// equalities (canonical text is an injective, typed encoding of the tree);
// it would change every key value. Canonical is the exact comparison when a
// 2^-64 collision chance per pair is not acceptable.
//
// # Errors
//
// Every error wraps exactly one of [ErrNoAnswer], [ErrMalformed],
// [ErrAmbiguous] and [ErrInvalidIntent], and says what was wrong and where
// (byte offsets into the original reply). Upstream, each is a red flag:
// the sample is discarded and resampled and never votes.
//
// # Robustness
//
// Parse, FromToolCalls, Key and Canonical never panic. Parse runs in time
// linear in its input whatever the content (1 MiB of '{', of '[', of
// backticks or of fence lines is parsed in milliseconds), and nothing
// recurses deeper than MaxDepth, including hand-built cyclic Values given
// to Key. FuzzParse and FuzzKey check this and the round trip
// Key(Parse(Canonical(o))) == Key(o).
package intent
