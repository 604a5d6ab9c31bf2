package hanoi

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/mdap-go/mdap/internal/fielderr"
)

// MaxDisks is the largest number of disks this package handles: 2^30 - 1
// steps, and 3^30 states (the Oracle numbers its wrong answers over them).
// The paper's run has 20.
const MaxDisks = 30

// The sentinel errors of this package; test with [errors.Is]. Each error
// returned wraps exactly one of them and says what was wrong.
var (
	// ErrFormat: a reply, or a decided answer handed to Apply, is not in the
	// required format (see [ParseReply] and [AnswerFromValue]). The maker.Task
	// adapter's Decode wraps maker.ErrFormat beside it.
	ErrFormat = errors.New("answer not in the required format")

	// ErrState: a state is not a valid arrangement of the disks 1..n (a disk
	// missing, doubled or out of range, a peg not in decreasing order from
	// bottom to top, not three pegs).
	ErrState = errors.New("invalid state")

	// ErrIllegalMove: a move breaks the rules in the state it is applied to.
	ErrIllegalMove = errors.New("illegal move")

	// ErrNoMove: the iterative rule has no move to make in a state (every
	// disk is on the peg of disk 1).
	ErrNoMove = errors.New("no move to make")

	// ErrConfig: a number of disks outside 1..MaxDisks.
	ErrConfig = fielderr.ErrConfig

	// ErrPrompt: the Oracle could not read a step prompt.
	ErrPrompt = errors.New("not a step prompt")

	// ErrDone: Apply or Advance was called on a finished task.
	ErrDone = errors.New("task already finished")
)

// Move is one move: disk Disk (1 is the smallest) from peg From to peg To,
// pegs numbered 0, 1, 2. The paper writes it [disk, from, to].
type Move struct {
	Disk, From, To int
}

// String writes m as the paper does: "[1, 0, 2]".
func (m Move) String() string { return string(m.appendText(make([]byte, 0, 16))) }

// appendText appends m as String writes it.
func (m Move) appendText(b []byte) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(m.Disk), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(m.From), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(m.To), 10)
	return append(b, ']')
}

// State is an arrangement of the disks on the three pegs, each peg listed
// from bottom to top, as in the paper: with 3 disks the start is
// [[3, 2, 1], [], []], disk 1 (the smallest) on top of peg 0. A valid state
// has each of the disks 1..n exactly once and every peg strictly
// decreasing from bottom to top; that is the only arrangement the rules
// allow, and every assignment of disks to pegs gives exactly one.
//
// The functions of this package never modify a State they are given and
// never return one that shares memory with their input.
type State [3][]int

// Start returns the starting state with n disks, all on peg 0. It does not
// check n.
func Start(n int) State {
	s := State{make([]int, 0, n), {}, {}}
	for d := n; d >= 1; d-- {
		s[0] = append(s[0], d)
	}
	return s
}

// Goal returns the finished state with n disks, all on peg 2.
func Goal(n int) State {
	s := Start(n)
	s[0], s[2] = s[2], s[0]
	return s
}

// Disks returns the number of disks on the pegs.
func (s State) Disks() int { return len(s[0]) + len(s[1]) + len(s[2]) }

// Clone returns a copy of s that shares no memory with it; nil pegs become
// empty ones.
//
// The three pegs share one backing array, each capped at its length, so
// that an append to a peg copies it: one allocation, not three.
func (s State) Clone() State {
	buf := make([]int, len(s[0])+len(s[1])+len(s[2]))
	var c State
	off := 0
	for p := range s {
		k := copy(buf[off:], s[p])
		c[p] = buf[off : off+k : off+k]
		off += k
	}
	return c
}

// Equal reports whether s and t hold the same disks in the same places.
func (s State) Equal(t State) bool {
	for p := range s {
		if len(s[p]) != len(t[p]) {
			return false
		}
		for i := range s[p] {
			if s[p][i] != t[p][i] {
				return false
			}
		}
	}
	return true
}

// String writes s as the paper does: "[[3, 2], [], [1]]".
func (s State) String() string {
	return string(s.appendText(make([]byte, 0, 16+4*(len(s[0])+len(s[1])+len(s[2])))))
}

// appendText appends s as String writes it.
func (s State) appendText(b []byte) []byte {
	b = append(b, '[')
	for p := range s {
		if p > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '[')
		for i, d := range s[p] {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, int64(d), 10)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// Validate returns nil if s is a valid state of n disks, else an error
// wrapping [ErrState] that names the first problem. Cost: O(n).
func (s State) Validate(n int) error {
	if n < 1 || n > MaxDisks {
		return fmt.Errorf("%w: %d disks, want 1..%d", ErrConfig, n, MaxDisks)
	}
	seen := make([]bool, n+1)
	for p, peg := range s {
		for i, d := range peg {
			if d < 1 || d > n {
				return fmt.Errorf("%w: disk %d on peg %d is not one of 1..%d", ErrState, d, p, n)
			}
			if seen[d] {
				return fmt.Errorf("%w: disk %d appears twice", ErrState, d)
			}
			seen[d] = true
			if i > 0 && peg[i-1] < d {
				return fmt.Errorf("%w: disk %d on top of the smaller disk %d on peg %d (pegs are listed bottom to top)", ErrState, d, peg[i-1], p)
			}
		}
	}
	for d := 1; d <= n; d++ {
		if !seen[d] {
			return fmt.Errorf("%w: disk %d is missing", ErrState, d)
		}
	}
	return nil
}

// top returns the top disk of peg p, or 0 when it is empty.
func (s State) top(p int) int {
	if len(s[p]) == 0 {
		return 0
	}
	return s[p][len(s[p])-1]
}

// pegOf returns the peg holding disk d, or -1.
func (s State) pegOf(d int) int {
	for p := range s {
		for _, x := range s[p] {
			if x == d {
				return p
			}
		}
	}
	return -1
}

// Legal returns nil if m is a legal move in s (pegs in 0..2 and distinct,
// m.Disk on top of m.From, m.To empty or topped by a larger disk), else an
// error wrapping [ErrIllegalMove]. It assumes s is valid. Cost: O(1).
func (s State) Legal(m Move) error {
	switch {
	case m.From < 0 || m.From > 2 || m.To < 0 || m.To > 2:
		return fmt.Errorf("%w: %v: pegs are 0, 1 and 2", ErrIllegalMove, m)
	case m.From == m.To:
		return fmt.Errorf("%w: %v: from and to are the same peg", ErrIllegalMove, m)
	case s.top(m.From) != m.Disk || m.Disk == 0:
		return fmt.Errorf("%w: %v: disk %d is not on top of peg %d", ErrIllegalMove, m, m.Disk, m.From)
	case s.top(m.To) != 0 && s.top(m.To) < m.Disk:
		return fmt.Errorf("%w: %v: disk %d would go on the smaller disk %d", ErrIllegalMove, m, m.Disk, s.top(m.To))
	}
	return nil
}

// Apply returns the state after the legal move m, or an error wrapping
// [ErrIllegalMove]. s is not modified. Cost: O(n) for the copy.
func (s State) Apply(m Move) (State, error) {
	if err := s.Legal(m); err != nil {
		return State{}, err
	}
	// As Clone, with the move made while copying: one allocation.
	buf := make([]int, len(s[0])+len(s[1])+len(s[2]))
	var next State
	off := 0
	for p := range s {
		peg := s[p]
		if p == m.From {
			peg = peg[:len(peg)-1]
		}
		k := copy(buf[off:], peg)
		if p == m.To {
			buf[off+k] = m.Disk
			k++
		}
		next[p] = buf[off : off+k : off+k]
		off += k
	}
	return next, nil
}

// LegalMoves returns every legal move in s, ordered by (disk, from, to):
// two or three moves in a valid state that is not empty. Cost: O(1).
func (s State) LegalMoves() []Move {
	var out []Move
	for from := range 3 {
		d := s.top(from)
		if d == 0 {
			continue
		}
		for to := range 3 {
			if m := (Move{d, from, to}); s.Legal(m) == nil {
				out = append(out, m)
			}
		}
	}
	// At most 3 moves, from at most 3 disks: insertion sort by disk.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Disk < out[j-1].Disk; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
