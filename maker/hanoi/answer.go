package hanoi

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/mdap-go/mdap/intent"
)

// Answer is one step's answer: a move and the state the microagent says it
// leads to.
type Answer struct {
	Move Move
	Next State
}

// Text writes a in the paper's format, the two lines
//
//	move = [1, 0, 2]
//	next_state = [[3, 2], [], [1]]
func (a Answer) Text() string {
	b := make([]byte, 0, 64+4*a.Next.Disks())
	b = a.Move.appendText(append(b, "move = "...))
	return string(a.Next.appendText(append(b, "\nnext_state = "...)))
}

// JSON writes a as the JSON object {"move": [...], "next_state": [...]}.
func (a Answer) JSON() string {
	b := make([]byte, 0, 64+4*a.Next.Disks())
	b = a.Move.appendText(append(b, `{"move": `...))
	b = a.Next.appendText(append(b, `, "next_state": `...))
	return string(append(b, '}'))
}

// Value returns a in the canonical form of an intent.Output Value:
// {"move": [d, f, t], "next_state": [[...], [...], [...]]}, numbers as
// json.Number integers, empty pegs as empty (non-nil) lists. Two answers
// have deeply equal Values, and so the same intent.Key, exactly when they
// are equal. The result shares no memory with a.
func (a Answer) Value() map[string]any {
	num := func(x int) any {
		if x >= 0 && x < len(smallNumbers) {
			return smallNumbers[x] // boxed once: a json.Number is immutable
		}
		return json.Number(strconv.Itoa(x))
	}
	// One backing array for the move, the three pegs and their disks
	// (each slice capped at its length, so an append copies) instead of
	// five; each list stored in an interface is still boxed.
	n := 0
	for p := range a.Next {
		n += len(a.Next[p])
	}
	buf := make([]any, 6+n)
	move, pegs, disks := buf[0:3:3], buf[3:6:6], buf[6:]
	move[0], move[1], move[2] = num(a.Move.Disk), num(a.Move.From), num(a.Move.To)
	for p := range a.Next {
		m := len(a.Next[p])
		peg := disks[:m:m]
		disks = disks[m:]
		for i, d := range a.Next[p] {
			peg[i] = num(d)
		}
		pegs[p] = peg
	}
	return map[string]any{
		"move":       move,
		"next_state": pegs,
	}
}

// smallNumbers are the json.Numbers of 0 .. MaxDisks, boxed once.
var smallNumbers = func() []any {
	out := make([]any, MaxDisks+1)
	for i := range out {
		out[i] = json.Number(strconv.Itoa(i))
	}
	return out
}()

// ParseReply reads a reply with n disks and returns its answer, or a red
// flag. It accepts:
//
//   - the paper's format: a line `move = [disk, from, to]` and a line
//     `next_state = [[...], [...], [...]]` anywhere in the text (code
//     fences and surrounding prose allowed); when either appears more than
//     once, the last occurrence counts;
//   - otherwise, a JSON answer as [intent.Parse] finds it (fenced, inline or
//     the whole reply) that is an object with exactly the keys "move" and
//     "next_state", and no tool intent.
//
// The check is on format only, as the paper's red flags are: the move must
// be three integers, a disk of 1..n and pegs of 0..2; next_state must be
// three lists of integers holding each disk 1..n once, every peg strictly
// decreasing from bottom to top. Numbers may be spelled as JSON allows
// (1, 1.0, 1e0 are the same integer). ParseReply does not check that the
// move is legal, that it is the right one, or that next_state is what it
// leads to: a wrong answer is voting's business, and, as in the paper, an
// error that wins a vote propagates.
//
// Errors: [ErrConfig] (wrapped) when n is not in 1..MaxDisks; [ErrFormat]
// (wrapped) for a paper-format reply or a JSON answer that breaks the
// rules above; the error of intent.Parse ([intent.ErrNoAnswer],
// [intent.ErrMalformed], ...) when the reply holds neither format. Safe for
// concurrent use; cost linear in len(text).
func ParseReply(text string, n int) (Answer, error) {
	if n < 1 || n > MaxDisks {
		return Answer{}, fmt.Errorf("%w: %d disks, want 1..%d", ErrConfig, n, MaxDisks)
	}
	if a, ok := fastReply(text, n); ok {
		return a, nil
	}
	return parseReply(text, n)
}

// parseReply is ParseReply's general path.
func parseReply(text string, n int) (Answer, error) {
	mv, hasMove, err := lastList(text, "move")
	if err != nil {
		return Answer{}, err
	}
	st, hasState, err := lastList(text, "next_state")
	if err != nil {
		return Answer{}, err
	}
	switch {
	case hasMove && hasState:
		return answerFrom(mv, st, n)
	case hasMove:
		return Answer{}, fmt.Errorf("%w: a `move = [...]` line but no `next_state = [...]` line", ErrFormat)
	case hasState:
		return Answer{}, fmt.Errorf("%w: a `next_state = [...]` line but no `move = [...]` line", ErrFormat)
	}
	out, err := intent.Parse(text)
	if err != nil {
		return Answer{}, fmt.Errorf("hanoi: neither `move = [...]` lines nor a JSON answer: %w", err)
	}
	if out.Intent != nil {
		return Answer{}, fmt.Errorf("%w: a tool intent (%q): this task has no tools", ErrFormat, out.Intent.Tool)
	}
	return AnswerFromValue(out.Value, n)
}

// lastList finds the last `name = [` in text and decodes the list that
// opens there.
func lastList(text, name string) (any, bool, error) {
	start, ok := lastAssign(text, name)
	if !ok {
		return nil, false, nil
	}
	v, _, err := parseListAt(text, start)
	if err != nil {
		return nil, true, fmt.Errorf("%w: %s = ...: %v", ErrFormat, name, err)
	}
	return v, true, nil
}

// AnswerFromValue reads a decoded JSON answer with n disks: an object with
// exactly the keys "move" and "next_state", checked as [ParseReply]
// describes. Numbers may be json.Number, float64, int or int64, as long as
// they are integers; so it also reads back a Value that went through a
// journal. Errors: [ErrFormat] (wrapped), naming the first problem. Cost:
// O(n).
func AnswerFromValue(v any, n int) (Answer, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Answer{}, fmt.Errorf("%w: the answer is %s, want an object with \"move\" and \"next_state\"", ErrFormat, kind(v))
	}
	mv, okMove := m["move"]
	st, okState := m["next_state"]
	if !okMove || !okState || len(m) != 2 {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, strconv.Quote(k))
		}
		slices.Sort(keys) // a map's order is random: the message must not be
		return Answer{}, fmt.Errorf("%w: the answer has keys %v, want exactly \"move\" and \"next_state\"", ErrFormat, keys)
	}
	return answerFrom(mv, st, n)
}

func answerFrom(mv, st any, n int) (Answer, error) {
	move, err := ints(mv, "move")
	if err != nil {
		return Answer{}, err
	}
	if len(move) != 3 {
		return Answer{}, fmt.Errorf("%w: move has %d numbers, want [disk, from, to]", ErrFormat, len(move))
	}
	a := Answer{Move: Move{move[0], move[1], move[2]}}
	if a.Move.Disk < 1 || a.Move.Disk > n {
		return Answer{}, fmt.Errorf("%w: move %v: disk %d is not one of 1..%d", ErrFormat, a.Move, a.Move.Disk, n)
	}
	if a.Move.From < 0 || a.Move.From > 2 || a.Move.To < 0 || a.Move.To > 2 {
		return Answer{}, fmt.Errorf("%w: move %v: pegs are 0, 1 and 2", ErrFormat, a.Move)
	}
	pegs, ok := st.([]any)
	if !ok || len(pegs) != 3 {
		return Answer{}, fmt.Errorf("%w: next_state is %s, want a list of three pegs", ErrFormat, describe(st))
	}
	for p, peg := range pegs {
		if a.Next[p], err = ints(peg, pegNames[p]); err != nil {
			return Answer{}, err
		}
	}
	if err := a.Next.Validate(n); err != nil {
		return Answer{}, fmt.Errorf("%w: next_state %v: %w", ErrFormat, a.Next, err)
	}
	return a, nil
}

var pegNames = [3]string{"next_state peg 0", "next_state peg 1", "next_state peg 2"}

// plainInt reads -?[1-9][0-9]{0,8} or 0, the integers whose canonical text
// is themselves.
func plainInt(s string) (int, bool) {
	t := s
	if len(t) > 0 && t[0] == '-' {
		t = t[1:]
	}
	if t == "" || len(t) > 9 || (t[0] == '0' && len(t) > 1) {
		return 0, false
	}
	v := 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = 10*v + int(c-'0')
	}
	if len(t) < len(s) {
		if v == 0 {
			return 0, false // "-0": let the canonical path decide
		}
		v = -v
	}
	return v, true
}

// ints reads a list of integers; never nil.
func ints(v any, name string) ([]int, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s is %s, want a list of integers", ErrFormat, name, describe(v))
	}
	out := make([]int, len(list))
	for i, x := range list {
		d, ok := integer(x)
		if !ok {
			return nil, fmt.Errorf("%w: %s item %d is %s, want an integer", ErrFormat, name, i, describe(x))
		}
		out[i] = d
	}
	return out, nil
}

// integer reads an integral number of moderate size.
func integer(v any) (int, bool) {
	var f float64
	switch x := v.(type) {
	case json.Number:
		if v, ok := plainInt(string(x)); ok {
			return v, true
		}
		// The canonical text writes every integral value of moderate
		// size as a plain integer (1.0 and 1e0 are "1").
		c, err := intent.CanonicalNumber(string(x))
		if err != nil {
			return 0, false
		}
		i, err := strconv.ParseInt(c, 10, 32)
		return int(i), err == nil
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

// describe names a value's kind and shows it, for error messages.
func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) > 80 {
		return kind(v)
	}
	return kind(v) + " " + string(b)
}
