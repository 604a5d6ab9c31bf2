package hanoi

import (
	"fmt"

	"github.com/mdap-go/mdap/internal/fielderr"

	"github.com/tmc/langchaingo/llms"
)

// Task is Towers of Hanoi with n disks as a many-step task, as in the
// paper: disks 1..n start on peg 0 and go to peg 2, one move per step, for
// exactly 2^n - 1 steps. Each step's microagent sees the rules, the
// iterative procedure, the previous move and the current state, and answers
// with a move and the state it leads to.
//
// The state of the task is the winning answers' next_state, whatever it
// is: as in the paper, an error that wins a vote propagates. Advance
// records how many winners were wrong and how many broke the rules.
// Memory is O(n) however many steps run.
//
// A Task is not safe for concurrent use, except that its read-only methods
// (Decode, Parse, Prompt, Messages and the accessors) may run concurrently
// with each other, as maker.Task requires; Decode and Parse read only n,
// which never changes.
type Task struct {
	n              int
	state          State
	prev           *Move
	steps          int
	wrong, illegal int
}

// New returns the task with n disks at its start. Errors: a
// *fielderr.Error wrapping [ErrConfig], of the field "Disks", when n is not
// in 1..MaxDisks.
func New(n int) (*Task, error) {
	if n < 1 || n > MaxDisks {
		return nil, fielderr.New("hanoi.Task", "Disks", n, fmt.Sprintf("use 1 to %d", MaxDisks))
	}
	return &Task{n: n, state: Start(n)}, nil
}

// Fingerprint identifies the task and its start: "hanoi:N=<n>".
func (t *Task) Fingerprint() string { return fmt.Sprintf("hanoi:N=%d", t.n) }

// TaskVersion implements maker.TaskVersioner: the version of the task's
// prompt, reply format and rules, raised when a change to them could
// change a step's winner (a journal begun under another is then refused
// on resume).
func (t *Task) TaskVersion() string { return "hanoi/1" }

// Disks returns n.
func (t *Task) Disks() int { return t.n }

// State returns a copy of the current state.
func (t *Task) State() State { return t.state.Clone() }

// Previous returns a copy of the last winning move, or nil before the
// first step.
func (t *Task) Previous() *Move {
	if t.prev == nil {
		return nil
	}
	m := *t.prev
	return &m
}

// Steps returns the number of steps applied so far.
func (t *Task) Steps() int { return t.steps }

// WrongSteps returns the number of steps whose winner was not the correct
// answer: a move other than the iterative rule's ([CorrectMove]) for the
// state and previous move before it, or a next_state other than the one
// that move leads to. A correct run has none.
func (t *Task) WrongSteps() int { return t.wrong }

// IllegalSteps returns the number of steps whose winner broke the rules:
// an illegal move in the state before it, or a next_state other than the
// one its own move leads to. IllegalSteps <= WrongSteps.
func (t *Task) IllegalSteps() int { return t.illegal }

// Done reports whether all 2^n - 1 steps have been applied.
func (t *Task) Done() bool { return t.steps == TotalSteps(t.n) }

// Solved reports whether the task is done with every disk on peg 2 after
// exactly 2^n - 1 legal moves. Since the shortest solution is unique, a
// solved task also has no wrong step.
func (t *Task) Solved() bool {
	return t.Done() && t.illegal == 0 && t.state.Equal(Goal(t.n))
}

// Messages returns the current step's prompt: [Messages] for the current
// state and previous move. Cost: O(n).
func (t *Task) Messages() []llms.MessageContent { return Messages(t.n, t.state, t.prev) }

// Parse is [ParseReply] with the task's number of disks. It is safe for
// concurrent use, with Advance too: it reads only n.
func (t *Task) Parse(text string) (Answer, error) { return ParseReply(text, t.n) }

// Advance applies a step's winning answer: the state becomes a.Next and the
// previous move a.Move, right or wrong; WrongSteps and IllegalSteps count
// it as they say. It is deterministic. done reports that the last of the
// 2^n - 1 steps was applied.
//
// Errors (the task is then unchanged): [ErrDone] after the last step;
// [ErrFormat] (wrapped) when a is not a well-formed answer with n disks
// (see [ParseReply]), which Parse never returns. Cost: O(n).
func (t *Task) Advance(a Answer) (done bool, err error) {
	if t.Done() {
		return true, fmt.Errorf("%w: all %d steps applied", ErrDone, t.steps)
	}
	if wellFormed(a, t.n) {
		a.Next = a.Next.Clone() // the task keeps its own copy
	} else if a, err = answerFrom(moveList(a.Move), stateList(a.Next), t.n); err != nil {
		return false, err // answerFrom names the problem
	}
	right := false
	if c, err := correctMove(t.state, t.n, t.prev); err == nil && c == a.Move {
		next, _ := t.state.Apply(c)
		right = next.Equal(a.Next)
	}
	next, err := t.state.Apply(a.Move)
	legal := err == nil && next.Equal(a.Next)
	if !right {
		t.wrong++
	}
	if !legal {
		t.illegal++
	}
	t.state = a.Next // answerFrom built a fresh copy
	m := a.Move
	t.prev = &m
	t.steps++
	return t.Done(), nil
}

// wellFormed reports whether a passes answerFrom's checks with n disks,
// without building the lists answerFrom reads.
func wellFormed(a Answer, n int) bool {
	m := a.Move
	return m.Disk >= 1 && m.Disk <= n && m.From >= 0 && m.From <= 2 && m.To >= 0 && m.To <= 2 && validState(a.Next, n)
}

// moveList and stateList turn a hand-built Answer back into decoded-JSON
// shape, so that Advance checks it exactly as ParseReply would.
func moveList(m Move) any { return []any{m.Disk, m.From, m.To} }

func stateList(s State) any {
	pegs := make([]any, 3)
	for p := range s {
		peg := make([]any, len(s[p]))
		for i, d := range s[p] {
			peg[i] = d
		}
		pegs[p] = peg
	}
	return pegs
}
