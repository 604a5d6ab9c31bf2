package vote

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// This file is the decision core: a board that tracks the k-lead, and the
// racer, a state machine without goroutines or clocks that launches, buffers
// and commits samples in index order. Race drives a racer from goroutines;
// the tests drive the same racer synchronously.

// racer is one race's state. The launch plan depends on completion order;
// the tally never does: a sample is committed only once every lower index is
// committed, and only committed samples count (see Race).
type racer[T any] struct {
	cfg Config

	decided board // votes of the committed prefix: this decides
	seen    board // votes of every completed sample: this plans launches

	pending   window[T] // launched, uncommitted; front index == committed
	committed int       // samples committed (the next index to commit)
	inflight  int       // launched, not completed
	nonErr    int       // completed samples without a provider error
	failed    int       // completed samples with a provider error

	firsts []Sample[T] // the first committed vote of each key, in commit order
	// voters counts each key's committed votes by voter, kept only under
	// Config.MinVoters > 1.
	voters map[uint64]map[string]int
	tally  Tally
	// classes, under RaceChoosing with a Choose, turns a committed valid
	// sample's Key into its class's Key; nil is exact matching.
	classes *classes[T]

	over   bool
	won    bool
	winner T
	key    uint64
	cause  error // why the race ended without a winner
	detail error // the last provider error, or a context's cause
}

func newRacer[T any](cfg Config) *racer[T] {
	return &racer[T]{
		cfg:     cfg,
		decided: board{k: cfg.K},
		seen:    board{k: cfg.K},
	}
}

// projected is the board the launch plan reads. With one sample in flight
// at most, every completed sample is committed at once, so the two agree.
func (r *racer[T]) projected() *board {
	if r.cfg.Parallel == 1 || r.classes != nil {
		return &r.decided
	}
	return &r.seen
}

// plan returns how many samples to launch now: enough that, if every sample
// in flight voted for the current leader (counting completed but not yet
// committed samples), the leader would have exactly the lead it needs, plus
// Speculate more; capped by Parallel and by the sample budget. A plan that can launch
// nothing with nothing outstanding ends the race: the budget is spent.
func (r *racer[T]) plan() int {
	if r.over {
		return 0
	}
	need := r.projected().need()
	if r.cfg.MinVoters > 1 {
		// A lead is not enough without its voters: at least one more
		// vote per voter the leader lacks.
		top := r.projected().top
		need = max(need, r.cfg.MinVoters-len(r.voters[top]))
		// And the votes a voter's excess does not count (see discount):
		// each vote of another voter makes up for at least one.
		need = max(need, r.projected().need()+r.discount(top))
	}
	n := min(r.cfg.Parallel, need+r.cfg.Speculate) - r.inflight
	if r.classes != nil {
		// Classes are known only at commit: a completed sample waiting
		// behind a lower index is counted as still in flight.
		n = min(r.cfg.Parallel-r.inflight, need+r.cfg.Speculate-r.pending.n)
	}
	n = min(n, r.cfg.MaxSamples-r.nonErr-r.inflight)
	if r.failed > r.cfg.errorBudget() {
		// The error budget is spent even if the failures wait behind a
		// slow lower index: launch nothing more, let the commit end it.
		n = 0
	}
	if n > 0 {
		return n
	}
	if r.inflight == 0 {
		// Unreachable while the commit rules below hold (the prefix is
		// then committed and the budget check fired); kept so that a
		// race can never wait on nothing.
		r.finish(ErrUndecided, nil)
	}
	return 0
}

// launch reserves the next n indices, counts one round, and returns the
// first index.
func (r *racer[T]) launch(n int) int {
	first := r.tally.Launched
	for range n {
		r.pending.push()
	}
	r.tally.Launched += n
	r.inflight += n
	r.tally.Rounds++
	return first
}

// complete records the sample drawn for index i and commits, in index
// order, every sample that no longer waits on a lower index.
func (r *racer[T]) complete(i int, s Sample[T]) {
	r.inflight--
	if r.over {
		r.late(s)
		return
	}
	r.tally.Usage.Add(s.Usage)
	if s.Err == nil && s.Flag == nil && s.Key == 0 {
		// A programming error, not a vote: end the race now rather than
		// let every unset key vote together.
		r.finish(ErrConfig, fmt.Errorf("sample %d is valid (no Err, no Flag) but has Key 0; "+
			"a voting sample needs a non-zero key", i))
		return
	}
	if s.Err == nil {
		r.nonErr++
		if s.Flag == nil && r.cfg.Parallel > 1 && r.classes == nil {
			r.seen.add(s.Key)
		}
	} else {
		r.failed++
	}
	sl := r.pending.at(i - r.committed)
	sl.s, sl.done = s, true
	for !r.over && r.pending.n > 0 && r.pending.at(0).done {
		r.commit(r.pending.pop())
	}
}

// commit applies the next sample in index order to the tally.
func (r *racer[T]) commit(s Sample[T]) {
	r.committed++
	t := &r.tally
	switch {
	case s.Err != nil:
		t.Errors++
		r.detail = s.Err
		if t.Errors > r.cfg.errorBudget() {
			r.finish(ErrTooManyErrors, s.Err)
			return
		}
	case s.Flag != nil:
		t.Flagged++
		if t.Flags == nil {
			t.Flags = make(map[string]int, 2)
		}
		t.Flags[s.Flag.Error()]++
	default:
		t.Valid++
		if r.classes != nil {
			class, err := r.classes.join(s.Key, s.Value)
			if err != nil {
				t.Valid--
				r.finish(ErrMatch, err)
				return
			}
			s.Key = class
		}
		if r.decided.votes[s.Key] == 0 { // few keys a race: a slice, searched once, beats a map
			r.firsts = append(r.firsts, Sample[T]{Value: s.Value, Key: s.Key})
		}
		r.addVoter(s)
		if r.decided.add(s.Key) && r.enoughVoters() {
			r.over, r.won = true, true
			r.key = r.decided.top
			r.winner = r.firsts[slices.IndexFunc(r.firsts, func(f Sample[T]) bool { return f.Key == r.key })].Value
			return
		}
	}
	if t.Valid+t.Flagged >= r.cfg.MaxSamples {
		r.finish(ErrUndecided, nil)
	}
}

// enoughVoters reports whether the leading key's votes come from
// Config.MinVoters distinct voters, and whether it still leads by K once
// the votes its top voter casts beyond the others' are discounted.
func (r *racer[T]) enoughVoters() bool {
	if r.cfg.MinVoters <= 1 {
		return true
	}
	top := r.decided.top
	return len(r.voters[top]) >= r.cfg.MinVoters && r.decided.lead()-r.discount(top) >= r.cfg.K
}

// discount is how many of key's committed votes do not count toward its
// lead under MinVoters > 1 (see Config.MinVoters): those its top voter
// cast beyond one more than all its other voters together, so that a
// voter casting every vote for one wrong key (a liar, a broken worker)
// wins only by other voters' agreeing errors.
func (r *racer[T]) discount(key uint64) int {
	vs := r.voters[key]
	total, most := 0, 0
	for _, n := range vs {
		total += n
		most = max(most, n)
	}
	return max(0, most-(total-most)-1)
}

// addVoter records the voter of s, a valid sample, under MinVoters > 1.
func (r *racer[T]) addVoter(s Sample[T]) {
	if r.cfg.MinVoters <= 1 {
		return
	}
	if r.voters == nil {
		r.voters = make(map[uint64]map[string]int, 2)
	}
	vs := r.voters[s.Key]
	if vs == nil {
		vs = make(map[string]int, r.cfg.MinVoters)
		r.voters[s.Key] = vs
	}
	vs[s.Voter]++
}

// late records a sample that completed after the race ended: it never votes,
// but it was paid for.
func (r *racer[T]) late(s Sample[T]) { r.tally.Usage.Add(s.Usage) }

// stop ends the race because ctx is done.
func (r *racer[T]) stop(ctx context.Context) {
	if r.over {
		return
	}
	err := ctx.Err()
	var detail error
	if cause := context.Cause(ctx); cause != nil && cause != err {
		detail = cause
	}
	r.finish(err, detail)
}

func (r *racer[T]) finish(cause, detail error) {
	r.over, r.cause, r.detail = true, cause, detail
}

// result returns the race's result and, without a winner, its error.
func (r *racer[T]) result(wall time.Duration) (Result[T], error) {
	t := r.tally
	t.Wall = wall
	t.Votes = r.decided.votes
	if t.Votes == nil {
		t.Votes = map[uint64]int{}
	}
	t.Cancelled = t.Launched - t.Valid - t.Flagged - t.Errors
	if r.classes != nil {
		for k, class := range r.classes.of {
			if k != class {
				if t.Classes == nil {
					t.Classes = make(map[uint64]uint64, len(r.classes.of))
				}
				t.Classes[k] = class
			}
		}
	}
	if r.won {
		return Result[T]{Winner: r.winner, Key: r.key, Tally: t}, nil
	}
	cause := r.cause
	if cause == nil {
		cause = ErrUndecided // a race is never left running; defensive
	}
	return Result[T]{Tally: t}, &UndecidedError{
		Cause: cause,
		Err:   r.detail,
		Tally: t,
		msg:   r.describe(cause, t),
	}
}

func (r *racer[T]) describe(cause error, t Tally) string {
	first, second := r.decided.first, r.decided.second
	switch cause {
	case ErrUndecided:
		return fmt.Sprintf("vote: undecided: budget of %d samples spent without a lead of %d "+
			"(%d valid, %d flagged, %d errors; top key %d votes, next %d)",
			r.cfg.MaxSamples, r.cfg.K, t.Valid, t.Flagged, t.Errors, first, second) + r.describeVoters()
	case ErrTooManyErrors:
		return fmt.Sprintf("vote: too many errors: %d failed draws, at most %d allowed "+
			"(%d valid, %d flagged); last: %v",
			t.Errors, r.cfg.errorBudget(), t.Valid, t.Flagged, r.detail)
	case ErrConfig:
		return fmt.Sprintf("vote: %v: %v (race stopped after %d samples)", cause, r.detail, t.Launched)
	default:
		msg := fmt.Sprintf("vote: race stopped after %d samples (%d valid, %d flagged, %d errors): %v",
			t.Launched, t.Valid, t.Flagged, t.Errors, cause)
		if r.detail != nil {
			msg += ": " + r.detail.Error()
		}
		return msg
	}
}

// describeVoters says, under MinVoters > 1, from how many voters the
// leader's votes came.
func (r *racer[T]) describeVoters() string {
	if r.cfg.MinVoters <= 1 {
		return ""
	}
	top := r.decided.top
	msg := fmt.Sprintf("; the top key's votes came from %d distinct voters, %d needed", len(r.voters[top]), r.cfg.MinVoters)
	if d := r.discount(top); d > 0 {
		msg += fmt.Sprintf(", %d of them from one voter beyond the others' and not counted", d)
	}
	return msg
}
