package vote

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrMatch: a Choose failed (an embedder or judge call behind it); the race
// stops with this cause and the chooser's error, never with a class chosen
// from a failed call.
var ErrMatch = errors.New("matcher failed")

// Match reports whether two valid samples' values mean the same answer,
// so that they vote together although their keys differ; FirstMatch makes
// it the Choose a race takes. A Match must be reflexive and symmetric,
// must agree with the keys (two values with equal keys match each other
// and the same third values), and must be a pure function of its
// arguments. It need not be transitive (a numeric tolerance is not): the
// classes are then fixed by the sample order, as RaceChoosing says.
type Match[T any] func(a, b T) bool

// Choose picks the class a new valid sample joins, seeing every class at
// once: reps are the classes' representatives (first members) in creation
// order, and Choose returns the index of the one v belongs to, or -1 to
// start a class. It is the seam for matchers beyond keys: a pairwise Match
// (FirstMatch), an embedding compared with each representative, or a
// judge that is shown the candidates together. A Choose must return the
// same answer for the same reps and v (a deterministic judge or embedder,
// or the race's classes are not reproducible), and an index out of range
// is treated as -1. It runs on the race's goroutine at commit time, so it
// may block (a model call) but holds back the race meanwhile; it is never
// called for a sample whose Key is already a class's or an earlier
// member's, nor while there is no class yet. An error stops the race with
// ErrMatch.
type Choose[T any] func(reps []T, v T) (int, error)

// RaceChoosing is Race with matching beyond keys: each valid sample, in
// index order, joins the class choose names (-1: it starts one). A class
// votes under its first sample's Key, so Result.Key and Tally.Votes name
// class keys and Result.Winner is the winning class's first value. With
// choose nil it is Race exactly: the same winners, tallies and launches.
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
// Cost, beyond Race's: one call of choose per sample with a key not seen
// before in the race (a key seen before costs a map lookup). Memory
// O(distinct keys). Errors: Race's, and an *UndecidedError with Cause
// ErrMatch wrapping choose's error when it fails.
func RaceChoosing[T any](ctx context.Context, cfg Config, choose Choose[T], draw Drawer[T]) (Result[T], error) {
	return race(ctx, cfg, choose, draw)
}

// FirstMatch is the Choose of a Match: the first representative it
// matches, or -1; nil for a nil match. It never fails. Cost: one call of
// match per representative tried.
func FirstMatch[T any](match Match[T]) Choose[T] {
	if match == nil {
		return nil
	}
	return func(reps []T, v T) (int, error) {
		return slices.IndexFunc(reps, func(r T) bool { return match(r, v) }), nil
	}
}

// classes assigns valid samples, in commit order, to classes under a
// Match: the first class whose representative a sample matches, else a new
// one keyed by the sample's own Key.
type classes[T any] struct {
	choose Choose[T]
	keys   []uint64          // the classes' keys, in creation order
	values []T               // their representatives, likewise
	of     map[uint64]uint64 // a member's Key to its class's Key
}

// join returns the class key of a valid sample with key and value, or
// choose's error (the sample then joins no class).
func (c *classes[T]) join(key uint64, value T) (uint64, error) {
	if k, ok := c.of[key]; ok {
		return k, nil
	}
	if c.of == nil {
		c.of = make(map[uint64]uint64, 4)
	}
	class := key
	if len(c.values) > 0 {
		i, err := c.choose(c.values, value)
		if err != nil {
			return 0, err
		}
		if i >= 0 && i < len(c.keys) {
			class = c.keys[i]
		}
	}
	if class == key {
		c.keys, c.values = append(c.keys, key), append(c.values, value)
	}
	c.of[key] = class
	return class, nil
}

// Classify returns the class key of each of a sequence of valid samples,
// by RaceChoosing's rule: in order, each joins the class choose names (a
// nil choose: equal keys), else starts a class keyed by its own key. It is
// how a tool that shows answers outside a race (maker parse, the MCP vote
// tool) groups them exactly as a race that tallied them in that order
// would. keys and values have equal lengths. Errors: choose's first,
// wrapped with ErrMatch. Cost: as RaceChoosing's per sample.
func Classify[T any](keys []uint64, values []T, choose Choose[T]) ([]uint64, error) {
	out := make([]uint64, len(keys))
	if choose == nil {
		copy(out, keys)
		return out, nil
	}
	c := classes[T]{choose: choose}
	for i, k := range keys {
		class, err := c.join(k, values[i])
		if err != nil {
			return nil, fmt.Errorf("%w: sample %d: %w", ErrMatch, i, err)
		}
		out[i] = class
	}
	return out, nil
}
