package hanoi

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/mdap-go/mdap/maker/sim"
)

// Oracle answers this package's step prompts for the simulated model
// (package maker/sim): it implements sim.Oracle and sim.Malformer. It
// reads the current state and the previous move from the prompt text
// itself ([ParsePrompt]), so a simulated run goes through the real prompt
// and the real parser.
//
// The zero Oracle writes replies in the paper's two-line format; with JSON
// set it writes the equivalent JSON object. An Oracle is safe for
// concurrent use and deterministic.
type Oracle struct {
	// JSON makes replies JSON objects {"move": ..., "next_state": ...}
	// instead of the paper's `move = ...` and `next_state = ...` lines.
	JSON bool
}

func (o Oracle) write(a Answer) string {
	if o.JSON {
		return a.JSON()
	}
	return a.Text()
}

// ParsePrompt reads the step data from a prompt's text: the state on the
// last line starting with [CurrentStatePrefix] and the move on the last
// line starting with [PreviousMovePrefix] (nil when it says none). The
// number of disks is the number of disks in the state.
//
// Errors: [ErrPrompt] (wrapped) when a line is missing or unreadable, or
// the state is not a valid state of its disks. Cost: linear in the prompt.
func ParsePrompt(prompt string) (State, *Move, error) {
	stateText, ok := lastLine(prompt, CurrentStatePrefix)
	if !ok {
		return State{}, nil, fmt.Errorf("%w: no %q line", ErrPrompt, strings.TrimSpace(CurrentStatePrefix))
	}
	prevText, ok := lastLine(prompt, PreviousMovePrefix)
	if !ok {
		return State{}, nil, fmt.Errorf("%w: no %q line", ErrPrompt, strings.TrimSpace(PreviousMovePrefix))
	}
	if s, prev, ok := fastPrompt(stateText, prevText); ok {
		return s, prev, nil
	}
	return slowPrompt(stateText, prevText)
}

// slowPrompt is ParsePrompt's general path, over the two lines' texts.
func slowPrompt(stateText, prevText string) (State, *Move, error) {
	v, err := parseList(stateText)
	raw, _ := v.([]any)
	if err != nil || len(raw) != 3 {
		return State{}, nil, fmt.Errorf("%w: the state %q is not three lists", ErrPrompt, stateText)
	}
	var s State
	for p := range raw {
		peg, err := ints(raw[p], "peg")
		if err != nil {
			return State{}, nil, fmt.Errorf("%w: the state %q: %v", ErrPrompt, stateText, err)
		}
		s[p] = peg
	}
	if err := s.Validate(s.Disks()); err != nil {
		return State{}, nil, fmt.Errorf("%w: the state %q: %w", ErrPrompt, stateText, err)
	}
	if strings.HasPrefix(prevText, "none") {
		return s, nil, nil
	}
	rawMove, err := parseList(prevText)
	if err != nil {
		return State{}, nil, fmt.Errorf("%w: the previous move %q is not a list", ErrPrompt, prevText)
	}
	mv, err := ints(rawMove, "previous move")
	if err != nil || len(mv) != 3 {
		return State{}, nil, fmt.Errorf("%w: the previous move %q is not [disk, from, to]", ErrPrompt, prevText)
	}
	return s, &Move{mv[0], mv[1], mv[2]}, nil
}

// lastLine returns the rest of the last line that starts with prefix
// (prefix holds no newline), trimmed. It reads lines from the end: a step
// prompt's data lines are its last few.
func lastLine(text, prefix string) (string, bool) {
	end := len(text)
	for {
		start := strings.LastIndexByte(text[:end], '\n') + 1
		if line := text[start:end]; strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line[len(prefix):]), true
		}
		if start == 0 {
			return "", false
		}
		end = start - 1
	}
}

// CorrectAnswer returns the iterative rule's answer in state s after prev:
// the move [CorrectMove] gives and the state it leads to. Errors: those of
// CorrectMove.
func CorrectAnswer(s State, prev *Move) (Answer, error) {
	m, err := CorrectMove(s, prev)
	if err != nil {
		return Answer{}, err
	}
	next, err := s.Apply(m)
	if err != nil { // unreachable: the rule's move is legal
		return Answer{}, err
	}
	return Answer{m, next}, nil
}

// oracleAnswer is the answer the Oracle treats as correct: CorrectAnswer,
// or, in a state where the rule has no move (reachable only after an
// error), disk 1's move as if prev had not moved it.
func oracleAnswer(s State, prev *Move) (Answer, error) {
	a, err := CorrectAnswer(s, prev)
	if err == nil || prev == nil {
		return a, err
	}
	return CorrectAnswer(s, nil)
}

// parsed is a prompt's step data, as ParsePrompt read it.
type parsed struct {
	prompt string
	state  State
	prev   *Move
	err    error
	// The correct answer, or the error of finding it; its reply in the
	// paper's format and in JSON, each written when first asked for.
	answer     Answer
	correctErr error
	correct    [2]atomic.Pointer[string]
}

// correctText returns the correct reply in the paper's format, or in JSON.
func (p *parsed) correctText(json bool) string {
	i := 0
	if json {
		i = 1
	}
	if t := p.correct[i].Load(); t != nil {
		return *t
	}
	t := p.answer.Text()
	if json {
		t = p.answer.JSON()
	}
	p.correct[i].Store(&t)
	return t
}

// lastParsed is the last prompt the Oracle read: the simulated model asks
// about every sample of a step with the same prompt string, so it is
// parsed once per step (the string compares in O(1) when it is the same
// string). The State it holds is shared and never changed: every method
// that derives another state (Apply, Clone) copies.
var lastParsed atomic.Pointer[parsed]

// parsePrompt is ParsePrompt through lastParsed.
func parsePrompt(prompt string) *parsed {
	if p := lastParsed.Load(); p != nil && p.prompt == prompt {
		return p
	}
	s, prev, err := ParsePrompt(prompt)
	p := &parsed{prompt: prompt, state: s, prev: prev, err: err}
	if err == nil {
		if a, aerr := oracleAnswer(s, prev); aerr != nil {
			p.correctErr = fmt.Errorf("%w: %w", ErrPrompt, aerr)
		} else {
			p.answer = a
		}
	}
	lastParsed.Store(p)
	return p
}

// Correct returns the correct reply to a step prompt: the iterative rule's
// move and the state it leads to. Errors: [ErrPrompt] (wrapped) when the
// prompt is not a step prompt of this package.
func (o Oracle) Correct(q sim.Query) (string, error) {
	p := parsePrompt(q.Prompt)
	switch {
	case p.err != nil:
		return "", p.err
	case p.correctErr != nil:
		return "", p.correctErr
	}
	return p.correctText(o.JSON), nil
}

// Wrong returns the variant-th wrong reply to a step prompt; see
// [WrongAnswer]. Errors: [ErrPrompt] (wrapped) as for Correct, or for a
// negative variant.
func (o Oracle) Wrong(q sim.Query, variant int) (string, error) {
	p := parsePrompt(q.Prompt)
	s, prev, err := p.state, p.prev, p.err
	if err != nil {
		return "", err
	}
	a, err := WrongAnswer(s, prev, variant)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrPrompt, err)
	}
	return o.write(a), nil
}

// WrongAnswer returns the variant-th wrong answer in state s after prev.
// Every one passes [ParseReply] and differs from the correct answer, and
// variants 0 .. WrongAnswers(n)-1 differ from each other; beyond that they
// repeat (variant mod WrongAnswers(n)). In order:
//
//   - first, the other legal moves of s, by (disk, from, to), each with
//     the state it leads to (so variant 0 is always a move of disk 1: in
//     the wrong direction, or one turn too many);
//   - then the right move with a wrong next_state: the correct next state
//     with its disks' pegs read as a base-3 number (disk d the d-th digit)
//     plus 1, 2, ..., modulo 3^n; the first moves disk 1 one peg on.
//
// Errors: those of CorrectMove (ErrNoMove is handled as for Correct), and
// an error for a negative variant. Cost: O(n).
func WrongAnswer(s State, prev *Move, variant int) (Answer, error) {
	if variant < 0 {
		return Answer{}, fmt.Errorf("negative variant %d", variant)
	}
	right, err := oracleAnswer(s, prev)
	if err != nil {
		return Answer{}, err
	}
	var alts []Move
	for _, m := range s.LegalMoves() {
		if m != right.Move {
			alts = append(alts, m)
		}
	}
	n := s.Disks()
	states := pow3(n)
	variant %= len(alts) + int(states-1)
	if variant < len(alts) {
		next, err := s.Apply(alts[variant])
		if err != nil { // unreachable: alts are legal
			return Answer{}, err
		}
		return Answer{alts[variant], next}, nil
	}
	j := uint64(variant - len(alts))
	code := (encode(right.Next) + j + 1) % states
	return Answer{right.Move, decode(code, n)}, nil
}

// WrongAnswers returns how many distinct wrong answers [WrongAnswer] has
// in state s (after prev): the other legal moves plus 3^n - 1 wrong
// next states.
func WrongAnswers(s State, prev *Move) int {
	right, err := oracleAnswer(s, prev)
	if err != nil {
		return 0
	}
	alts := 0
	for _, m := range s.LegalMoves() {
		if m != right.Move {
			alts++
		}
	}
	return alts + int(pow3(s.Disks())-1)
}

func pow3(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 3
	}
	return p
}

// encode reads a valid state as the base-3 number whose digit d-1 is the
// peg of disk d.
func encode(s State) uint64 {
	var code uint64
	for p := range s {
		for _, d := range s[p] {
			code += uint64(p) * pow3(d-1)
		}
	}
	return code
}

// decode is encode's inverse for n disks.
func decode(code uint64, n int) State {
	pegOf := make([]int, n+1)
	for d := 1; d <= n; d++ {
		pegOf[d] = int(code % 3)
		code /= 3
	}
	s := State{{}, {}, {}}
	for d := n; d >= 1; d-- {
		s[pegOf[d]] = append(s[pegOf[d]], d)
	}
	return s
}

// malformedCount is the number of Malformed variants.
const malformedCount = 9

// Malformed returns one of nine malformed replies to a step prompt
// (variant mod 9), each refused by [ParseReply]: a move of two numbers, a
// peg out of range, a disk missing from next_state, a peg out of order, a
// next_state of two pegs, a move with no next_state, a JSON object with an
// extra key, prose with no answer, a disk listed twice. It implements
// sim.Malformer. Errors: [ErrPrompt] (wrapped) as for Correct.
func (o Oracle) Malformed(q sim.Query, variant int) (string, error) {
	p := parsePrompt(q.Prompt)
	s, prev, err := p.state, p.prev, p.err
	if err != nil {
		return "", err
	}
	a, err := oracleAnswer(s, prev)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrPrompt, err)
	}
	mv, next := a.Move, a.Next
	line := func(move, state string) string { return "move = " + move + "\nnext_state = " + state }
	if variant < 0 {
		variant = -variant
	}
	switch variant % malformedCount {
	case 0:
		return line(fmt.Sprintf("[%d, %d]", mv.Disk, mv.To), next.String()), nil
	case 1:
		return line(fmt.Sprintf("[%d, %d, 3]", mv.Disk, mv.From), next.String()), nil
	case 2:
		bad := next.Clone()
		p := bad.pegOf(s.Disks())
		bad[p] = bad[p][1:] // the largest disk is at the bottom of its peg
		return line(mv.String(), bad.String()), nil
	case 3:
		bad := next.Clone()
		for p := range bad {
			if k := len(bad[p]); k >= 2 {
				bad[p][k-1], bad[p][k-2] = bad[p][k-2], bad[p][k-1]
				return line(mv.String(), bad.String()), nil
			}
		}
		fallthrough // no peg holds two disks: list one twice instead
	case 8:
		bad := next.Clone()
		p := bad.pegOf(1)
		bad[(p+1)%3] = append(bad[(p+1)%3], 1)
		return line(mv.String(), bad.String()), nil
	case 4:
		st := next.String()
		return line(mv.String(), st[:strings.LastIndex(st, ", [")]+"]"), nil
	case 5:
		return "move = " + mv.String(), nil
	case 6:
		return `{"move": ` + mv.String() + `, "next_state": ` + next.String() + `, "reason": "the iterative procedure"}`, nil
	default: // 7
		return "The next move follows the standard procedure: move the smallest disk one peg along its cycle.", nil
	}
}
