package vote

import "context"

// Match reports whether two valid samples' values mean the same answer,
// so that they vote together although their keys differ. The zero value
// (nil) is exact matching: samples vote together exactly when their keys
// are equal, which is what Race does.
//
// A Match must be reflexive and symmetric, must agree with the keys (two
// values with equal keys match each other and the same third values), and
// must be a pure function of its arguments, safe to call from the
// goroutine that called RaceMatching. It need not be transitive (a numeric
// tolerance is not): the classes are then fixed by the sample order, as
// RaceMatching says.
type Match[T any] func(a, b T) bool

// RaceMatching is Race with matching beyond keys: each valid sample, in
// index order, joins the first class (in the order the classes were
// created) whose representative, the class's first sample, it matches;
// if none, it starts a class. A class votes under its first sample's Key,
// so Result.Key and Tally.Votes name class keys and Result.Winner is the
// winning class's first value. A sample whose Key is already a class's,
// or is the Key of an earlier member, joins that class without a call to
// match. With match nil it is Race exactly: the same winners, tallies and
// launches.
//
// Determinism: classes are formed at commit time, in index order, never in
// completion order, so the classes, Winner, Key, Votes and the other
// counts Race names as deterministic are a pure function of the mapping
// from index to Sample, whatever Parallel and Speculate, as with Race.
// To keep that for launches too, the launch plan with a matcher counts
// only committed votes (a completed sample waiting behind a slower lower
// index counts as still in flight), so with Speculate = 0 no draw past the
// deciding index is started; the price is less overlap when one draw is
// slow.
//
// Cost, beyond Race's: a new distinct key is compared with up to
// #classes representatives (one call of match each); a key seen before
// costs a map lookup. Memory O(distinct keys). Errors: those of Race.
func RaceMatching[T any](ctx context.Context, cfg Config, match Match[T], draw Drawer[T]) (Result[T], error) {
	return race(ctx, cfg, match, draw)
}

// classes assigns valid samples, in commit order, to classes under a
// Match: the first class whose representative a sample matches, else a new
// one keyed by the sample's own Key.
type classes[T any] struct {
	match Match[T]
	reps  []rep[T]          // in creation order
	of    map[uint64]uint64 // a member's Key to its class's Key
}

type rep[T any] struct {
	key   uint64
	value T
}

// join returns the class key of a valid sample with key and value.
func (c *classes[T]) join(key uint64, value T) uint64 {
	if k, ok := c.of[key]; ok {
		return k
	}
	if c.of == nil {
		c.of = make(map[uint64]uint64, 4)
	}
	class := key
	for _, r := range c.reps {
		if c.match(r.value, value) {
			class = r.key
			break
		}
	}
	if class == key {
		c.reps = append(c.reps, rep[T]{key, value})
	}
	c.of[key] = class
	return class
}

// Classify returns the class key of each of a sequence of valid samples,
// by RaceMatching's rule: in order, each joins the first earlier class
// whose representative it matches (a nil match: equal keys), else starts
// a class keyed by its own key. It is how a tool that shows answers
// outside a race (maker parse, the MCP vote tool) groups them exactly as a
// race that tallied them in that order would. keys and values have equal
// lengths. Cost: as RaceMatching's per sample.
func Classify[T any](keys []uint64, values []T, match Match[T]) []uint64 {
	out := make([]uint64, len(keys))
	if match == nil {
		copy(out, keys)
		return out
	}
	c := classes[T]{match: match}
	for i, k := range keys {
		out[i] = c.join(k, values[i])
	}
	return out
}
