// Package intent defines what a microagent says for one step, an [Output]
// with an optional [ToolIntent], how it is read from a model's reply
// ([Parse], [FromToolCalls]), and when two replies mean the same step: their
// [Key], a hash of their canonical form ([Canonical]). It also holds what
// comes back to a microagent after its tool intent ran, an [Observation],
// so that tasks can read one without depending on the executor.
//
// Everything here is a pure function of its input: safe for concurrent use,
// deterministic, no I/O, linear in the size of its input, and it never
// panics, nor recurses deeper than [MaxDepth] (hand-built cyclic Values
// given to Key included). FuzzParse and FuzzKey check this and the round
// trip Key(Parse(Canonical(o))) == Key(o).
//
// The JSON decoder accepts exactly RFC 8259 JSON (FuzzParse checks it
// against encoding/json), and is stricter where laxness would let different
// texts vote together or change the data a caller re-marshals
// ([ErrMalformed] lists how). Prompts should ask for exactly one JSON
// answer and no example objects in prose: two different answers in a
// reply are [ErrAmbiguous].
//
// Keys are deterministic across processes and platforms, but belong to
// this version of the canonical form: TestKeyGolden pins some values, and a
// change to them is a breaking change for anything that compares keys
// across builds. Raw decoded JSON is never hashed (hashstructure hashes nil
// like 0, int(1) unlike float64(1), and XORs sets so duplicates cancel):
// Key hashes the canonical text.
//
// Beware: langchaingo v0.1.14's llms.ToolCall JSON round trip (MarshalJSON
// then UnmarshalJSON) silently drops the function name and arguments; never
// persist tool calls through it.
package intent
