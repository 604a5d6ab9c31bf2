package maker

import (
	"context"
	"hash/fnv"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
)

// AnswerMatcher says when two answers of a task vote together beyond
// equal canonical forms. package intent/match's Matcher is mdap's, built
// from the "x-mdap-match" annotations of an answer schema.
type AnswerMatcher interface {
	// Key returns an answer's vote key under the matcher: intent.Key of
	// its normal form, equal for answers the matcher counts as one; an
	// answer with a tool intent is keyed by intent.Key exactly.
	Key(out intent.Output) (uint64, error)
	// Tolerant reports a matcher that is not a normal form alone (a
	// number tolerance): answers with different keys may still match, so
	// a race must use Match (vote.RaceChoosing through vote.FirstMatch).
	Tolerant() bool
	// Match reports whether a and b vote together: reflexive and
	// symmetric, not necessarily transitive.
	Match(a, b intent.Output) bool
}

// ChoosingMatcher is an optional AnswerMatcher extension for a matcher
// that must see every earlier class at once, or call out (an embedder, a
// judge): Choose returns the index among reps (the classes' first
// members, in creation order) of the class v joins, or -1, under the
// race's context. A race then uses vote.RaceChoosing, and an error stops
// the step with vote.ErrMatch. package intent/match's Matcher implements
// it.
type ChoosingMatcher interface {
	AnswerMatcher
	Choose(ctx context.Context, reps []intent.Output, v intent.Output) (int, error)
}

// Matching is an optional Task extension for a task whose answers mean the
// same in more than one form: AnswerMatcher returns the matcher its answer
// contract declares, built once, or nil for exact matching. The solver
// then keys every valid sample with the matcher (text and set fields in
// their normal form), and when the matcher is Tolerant races with
// vote.RaceChoosing, so that answers within a number tolerance vote
// together; the journal's keys are those class keys. package maker/spec's
// Task implements it from "x-mdap-match" (intent/match).
type Matching interface {
	AnswerMatcher() AnswerMatcher
}

// MatcherOf returns task's matcher: its AnswerMatcher, or nil (exact).
func MatcherOf(task Task) AnswerMatcher {
	if m, ok := task.(Matching); ok {
		return m.AnswerMatcher()
	}
	return nil
}

// KeyIn returns the vote key out has in a run of task by this solver:
// Solver.Key (a tool intent normalized by the Executor), then the task's
// matcher's normal form (see Matching). Under a Tolerant matcher a race
// may still put the answer in an earlier class with another key: use
// ClassesIn for a sequence of answers. Errors: Solver.Key's.
func (s *Solver) KeyIn(task Task, out intent.Output) (uint64, error) {
	m := MatcherOf(task)
	if m == nil || out.Intent != nil {
		return s.Key(out) // a matcher keys a tool intent exactly
	}
	return m.Key(out)
}

// ClassesIn returns the class key of each answer of outs, in order, as a
// race of task that tallied them in that order would count them: keys by
// KeyIn, then vote.Classify with the task's matcher when it is Tolerant
// (an embedding or judge matcher calls out under ctx). Errors: KeyIn's,
// for the first answer that has none; vote.ErrMatch when the matcher's
// call fails.
func (s *Solver) ClassesIn(ctx context.Context, task Task, outs []intent.Output) ([]uint64, error) {
	keys := make([]uint64, len(outs))
	for i, o := range outs {
		k, err := s.KeyIn(task, o)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return vote.Classify(keys, outs, raceChoose(ctx, MatcherOf(task)))
}

// raceChoose is the vote.Choose a race needs for m: nil (keys decide)
// unless m is Tolerant; m's Choose under ctx for a ChoosingMatcher, else
// the first class m.Match matches.
func raceChoose(ctx context.Context, m AnswerMatcher) vote.Choose[intent.Output] {
	if m == nil || !m.Tolerant() {
		return nil
	}
	if c, ok := m.(ChoosingMatcher); ok {
		return func(reps []intent.Output, v intent.Output) (int, error) { return c.Choose(ctx, reps, v) }
	}
	return vote.FirstMatch(m.Match)
}

// race is vote.RaceChoosing with the run's task's matcher: vote.Race
// exactly for a task without a Tolerant one.
// Under Config.ToolFirst it is vote.RaceGrouped by toolGroup.
// The race draws sample offset+i for its index i (a second race of a
// step numbers on from the first's), and marks the samples it counted,
// with their classes, in the step's tally.
func (r *run) race(ctx context.Context, cfg vote.Config, offset int, draw vote.Drawer[intent.Output]) (vote.Result[intent.Output], error) {
	choose := raceChoose(ctx, MatcherOf(r.task))
	if offset > 0 {
		first := draw
		draw = func(ctx context.Context, i int) vote.Sample[intent.Output] { return first(ctx, offset+i) }
	}
	var res vote.Result[intent.Output]
	var err error
	var chosen uint64 // the winning group of a tool-first vote
	if r.ToolFirst {
		res, err = vote.RaceGrouped(ctx, cfg, r.toolGroup, choose, draw)
		if err == nil {
			chosen = r.toolGroup(res.Winner)
		}
	} else {
		res, err = vote.RaceChoosing(ctx, cfg, choose, draw)
	}
	r.tally.counted(offset, res.Valid+res.Flagged+res.Errors, res.Classes, chosen)
	return res, err
}

// toolGroup is a valid answer's group in a tool-first vote: its tool's
// name, hashed, for a tool call; the answer's own key otherwise.
func (r *run) toolGroup(o intent.Output) uint64 {
	if o.Intent == nil {
		k, err := r.KeyIn(r.task, o)
		if err != nil || k == 0 {
			return 1 // unreachable: the sample was keyed before it voted
		}
		return k
	}
	h := fnv.New64a()
	h.Write([]byte("tool\x00" + o.Intent.Tool))
	return h.Sum64() | 1
}

// rekey sets a valid sample's key to its key under the task's matcher.
func (r *run) rekey(sm *vote.Sample[intent.Output]) {
	m := MatcherOf(r.task)
	if m == nil || sm.Err != nil || sm.Flag != nil {
		return
	}
	k, err := m.Key(sm.Value)
	if err != nil { // unreachable: judge keyed the same value
		sm.Flag = classify(err)
		return
	}
	sm.Key = k
}
