package hanoi

import (
	"fmt"
	"iter"
)

// TotalSteps returns the number of moves that solve n disks, 2^n - 1; 0 if
// n is out of 1..MaxDisks.
func TotalSteps(n int) int {
	if n < 1 || n > MaxDisks {
		return 0
	}
	return 1<<n - 1
}

// Direction returns the peg step of disk 1 under the iterative rule with n
// disks: +1 (0 → 1 → 2 → 0) when n is even, +2 (0 → 2 → 1 → 0) when n is
// odd. It is what makes the tower end on peg 2.
func Direction(n int) int {
	if n%2 == 0 {
		return 1
	}
	return 2
}

// CorrectMove returns the move the iterative rule makes in state s after
// the move prev (nil for the first move): if prev did not move disk 1, disk
// 1 moves one peg in its [Direction] (which depends on the parity of the
// number of disks in s); otherwise the only legal move that does not
// involve disk 1. Following it from [Start] solves the puzzle in exactly
// [TotalSteps] moves.
//
// Errors: [ErrState] (wrapped) if s is not a valid state of its disks;
// [ErrNoMove] if prev moved disk 1 and no other disk can move. Cost: O(n).
func CorrectMove(s State, prev *Move) (Move, error) {
	n := s.Disks()
	if err := s.Validate(n); err != nil {
		return Move{}, err
	}
	return correctMove(s, n, prev)
}

// correctMove is CorrectMove for a state known to be valid with n disks.
func correctMove(s State, n int, prev *Move) (Move, error) {
	one := s.pegOf(1)
	if prev == nil || prev.Disk != 1 {
		return Move{1, one, (one + Direction(n)) % 3}, nil
	}
	a, b := (one+1)%3, (one+2)%3
	ta, tb := s.top(a), s.top(b)
	switch {
	case ta == 0 && tb == 0:
		return Move{}, fmt.Errorf("%w: every disk is on peg %d with disk 1", ErrNoMove, one)
	case ta == 0 || (tb != 0 && tb < ta):
		return Move{tb, b, a}, nil
	default:
		return Move{ta, a, b}, nil
	}
}

// Moves returns the solution of n disks by the iterative rule: the
// TotalSteps(n) moves from Start(n) to Goal(n), in order (nothing for n out
// of 1..MaxDisks). Memory stays O(n) however many moves are drawn; each
// costs O(n).
func Moves(n int) iter.Seq[Move] {
	return func(yield func(Move) bool) {
		if TotalSteps(n) == 0 {
			return
		}
		s := Start(n)
		var prev *Move
		for range TotalSteps(n) {
			m, err := correctMove(s, n, prev)
			if err != nil { // unreachable: the rule always has a move here
				return
			}
			if s, err = s.Apply(m); err != nil {
				return
			}
			if !yield(m) {
				return
			}
			prev = &m
		}
	}
}
