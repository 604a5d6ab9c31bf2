package vote

import (
	"context"
	"errors"
	"sync"
)

// ErrOtherGroup is the red flag of a sample in the second race of
// RaceGrouped that proposes another group than the one the first race
// chose: it does not vote on the winning group's answers.
var ErrOtherGroup = errors.New("another group")

// RaceGrouped is a hierarchical vote: a first race decides the group (a
// tool call's tool, with its arguments left aside) by first-to-ahead-by-K
// over group(value) of each valid sample; a second race decides the
// answer within that group by first-to-ahead-by-K over the samples' own
// keys (with choose, as RaceChoosing), where a valid sample of another
// group is red-flagged ErrOtherGroup. The second race starts again from
// index 0 and takes each sample the first race drew from a cache: a
// sample is drawn once (a draw the first race cancelled, or that failed,
// is drawn again), so the second race often decides without a new draw.
// group must return a non-zero key for every valid value; for an answer
// that has no group of its own (no tool call), return its Key, so that
// such an answer wins both races alike.
//
// Determinism: both races are RaceChoosing's, over the same mapping from
// index to Sample, so the group, Winner, Key and Votes are a pure
// function of that mapping, whatever Parallel and Speculate.
//
// Result: the second race's Winner, Key, Votes, Valid, Flagged and Errors
// (over the indices it counted, the first race's samples included);
// Launched counts the draws actually made, Usage theirs, Rounds and Wall
// both races'. Errors: the first race's (its Tally then), then the
// second's. Cost: two races' bookkeeping; draws as one race plus what the
// second needs beyond the first's samples.
func RaceGrouped[T any](ctx context.Context, cfg Config, group func(T) uint64, choose Choose[T], draw Drawer[T]) (Result[T], error) {
	if group == nil {
		return RaceChoosing(ctx, cfg, choose, draw)
	}
	var mu sync.Mutex
	cache := map[int]Sample[T]{}
	var draws int
	var usage Usage
	fresh := func(ctx context.Context, i int) Sample[T] {
		mu.Lock()
		s, ok := cache[i]
		mu.Unlock()
		if ok {
			return s
		}
		s = draw(ctx, i)
		mu.Lock()
		draws++
		usage.Add(s.Usage)
		if s.Err == nil {
			cache[i] = s
		}
		mu.Unlock()
		return s
	}
	first, err := Race(ctx, cfg, func(ctx context.Context, i int) Sample[T] {
		s := fresh(ctx, i)
		if s.Err == nil && s.Flag == nil {
			s.Key = group(s.Value)
		}
		return s
	})
	if err != nil {
		return first, err
	}
	chosen := first.Key
	second, err := RaceChoosing(ctx, cfg, choose, func(ctx context.Context, i int) Sample[T] {
		s := fresh(ctx, i)
		if s.Err == nil && s.Flag == nil && group(s.Value) != chosen {
			s.Flag = ErrOtherGroup
		}
		return s
	})
	mu.Lock()
	second.Launched, second.Usage = draws, usage
	mu.Unlock()
	second.Cancelled = max(0, second.Launched-second.Valid-second.Flagged-second.Errors)
	second.Rounds += first.Rounds
	second.Wall += first.Wall
	return second, err
}
