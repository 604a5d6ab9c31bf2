package intent

import (
	"hash/fnv"

	"github.com/mitchellh/hashstructure/v2"
)

// Key returns the vote key of o: two Outputs have the same key exactly when
// they have the same canonical text ([Canonical]), that is when they mean
// the same step. The key is a function of that text alone: Key(o) ==
// KeyOf(Canonical(o)).
//
// Same key: JSON key order, white space, 1 versus 1.0 versus 1e0 (numbers
// compare by exact decimal value, big integers are never rounded), fenced
// versus inline versus whole-reply versus native tool call, any Rationale,
// nil versus empty Args, and, beside an Intent, no Value versus a Value that
// is JSON null (a nil map, a nil slice, ...) or an empty object. Different
// key: null versus 0, "1" versus 1, [a,a] versus [a] versus [], another
// tool, another argument or argument value, and Value only versus Intent
// only versus both.
//
// Key never returns 0 with a nil error, so callers may use 0 as "no key"
// (see [KeyOf]). The key depends only on o, not on the process, the platform
// or map iteration order. Different canonical texts collide with
// probability about 2^-64 per pair; compare the texts where an exact
// comparison is needed. Keys belong to this version of the canonical form:
// do not persist them as identities across upgrades of this package.
//
// Key accepts every Output that Parse and FromToolCalls return, and
// hand-built ones (see [Output]). Its errors are those of [Canonical], and
// on error it returns 0. Cost: that of Canonical plus one
// pass over the text (see BenchmarkKey).
func Key(o Output) (uint64, error) {
	c, err := Canonical(o)
	if err != nil {
		return 0, err
	}
	return KeyOf(c), nil
}

// ZeroHashKey is the key of a canonical text whose hash is 0: [KeyOf] maps
// that one hash value to 1, so that no key is 0. The two texts hashing to
// 0 and to 1 then share a key: a collision like any other.
const ZeroHashKey uint64 = 1

// KeyOf returns the key of a canonical text, for a caller that already has
// Canonical(o) (to log it, say) and must not canonicalise twice: KeyOf(c) ==
// Key(o) whenever c is the text Canonical(o) returned. It does not check
// that c is canonical; for any other bytes it is just a hash.
//
// The key is hashstructure/v2's FormatV2 hash of the text as a string, with
// FNV-1a (64 bits) as the hasher, which is exactly FNV-1a over the bytes of
// c; except that a hash of 0 becomes [ZeroHashKey], so KeyOf never returns
// 0. Cost: linear in len(c), a few small allocations.
func KeyOf(canonical []byte) uint64 {
	// No error: hashstructure hashes a string by writing its bytes to the
	// hasher, and FNV never fails to write.
	h, _ := hashstructure.Hash(string(canonical), hashstructure.FormatV2,
		&hashstructure.HashOptions{Hasher: fnv.New64a()})
	if h == 0 {
		return ZeroHashKey
	}
	return h
}

// Canonical returns o's canonical JSON text, for display, logs and exact
// comparison: object keys sorted bytewise, no white space, numbers in
// canonical form ([CanonicalNumber]), strings with only '"', '\' and
// control characters escaped, Rationale dropped (see [Key] for what equal
// texts mean). A Value that is JSON null beside an Intent, or an empty
// object, is written as no Value.
//
// The text is a reply Parse reads back to an Output with the same key and
// the same canonical text: a Value alone is written as itself; an Intent is
// written as {"tool_intent":{"args":{...},"tool":"..."}} with the members of
// an object Value beside it.
//
// Errors: [ErrNoAnswer] if o has neither a Value (other than JSON null) nor
// an Intent; [ErrInvalidIntent] if the Intent's Tool is empty or not valid
// UTF-8; [ErrMalformed] if a value is not JSON (NaN, infinities, invalid
// UTF-8, channels, nesting deeper than [MaxDepth], ...); [ErrAmbiguous] if
// o cannot be written as one reply: a Value beside an Intent that is not a
// JSON object or that has a "tool_intent" or "rationale" key, or a Value
// alone that Parse would read as an intent (an object with a "tool_intent"
// key, or of the bare intent shape: see [Parse]).
// Parse never returns such an Output.
//
// Cost: linear in the size of o (see BenchmarkCanonical).
func Canonical(o Output) ([]byte, error) {
	f, err := canonicalForm(o)
	if err != nil {
		return nil, err
	}
	return appendForm(nil, &f), nil
}
