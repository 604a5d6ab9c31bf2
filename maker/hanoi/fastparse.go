package hanoi

import "strings"

// A fast path of ParseReply for the paper's format as models write it:
// `move = [d, f, t]` and `next_state = [[...], [...], [...]]` with plain
// integers. It reads the lists straight into ints, without the []any trees
// of the general parser, and gives up (ok false) on anything else, so
// that ParseReply's general path decides, with its own error messages.
// What it accepts, the general path accepts with the same Answer
// (TestFastParseAgrees checks it on every reply the fuzz corpus and the
// Oracle write).

// fastReply returns the answer of a paper-format reply with n disks, or ok
// false when the reply is not one the fast path reads.
func fastReply(text string, n int) (a Answer, ok bool) {
	i, found := lastAssign(text, "move")
	if !found {
		return a, false
	}
	var mv [3]int
	p := intScanner{s: text, i: i}
	if p.flat(mv[:]) != 3 {
		return a, false
	}
	j, found := lastAssign(text, "next_state")
	if !found {
		return a, false
	}
	p = intScanner{s: text, i: j}
	if !p.state(&a.Next, n) {
		return a, false
	}
	a.Move = Move{mv[0], mv[1], mv[2]}
	if a.Move.Disk < 1 || a.Move.Disk > n || a.Move.From < 0 || a.Move.From > 2 || a.Move.To < 0 || a.Move.To > 2 {
		return Answer{}, false
	}
	if !validState(a.Next, n) {
		return Answer{}, false
	}
	return a, true
}

// validState is State.Validate without its error messages.
func validState(s State, n int) bool {
	if n < 1 || n > MaxDisks {
		return false
	}
	var seen [MaxDisks + 1]bool
	count := 0
	for _, peg := range s {
		for i, d := range peg {
			if d < 1 || d > n || seen[d] || (i > 0 && peg[i-1] < d) {
				return false
			}
			seen[d] = true
			count++
		}
	}
	return count == n
}

// intScanner reads lists of plain integers (as listParser's number reads
// them: an optional '-', at most nine digits, no leading zero).
type intScanner struct {
	s string
	i int
}

func (p *intScanner) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *intScanner) int() (int, bool) {
	neg := false
	if p.i < len(p.s) && p.s[p.i] == '-' {
		neg = true
		p.i++
	}
	start, v := p.i, 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		v = 10*v + int(p.s[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 9 || (digits > 1 && p.s[start] == '0') {
		return 0, false
	}
	if p.i < len(p.s) && (p.s[p.i] == '.' || p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// flat reads a list of at most len(out) integers at p.i ('[' there) into
// out and returns how many it read, or -1 if it is not such a list.
func (p *intScanner) flat(out []int) int {
	if p.i >= len(p.s) || p.s[p.i] != '[' {
		return -1
	}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return 0
	}
	n := 0
	for {
		p.space()
		v, ok := p.int()
		if !ok || n == len(out) {
			return -1
		}
		out[n] = v
		n++
		p.space()
		if p.i >= len(p.s) {
			return -1
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return n
		default:
			return -1
		}
	}
}

// state reads a list of three integer lists with at most n integers in
// all into s; the three pegs share one backing array.
func (p *intScanner) state(s *State, n int) bool {
	if p.i >= len(p.s) || p.s[p.i] != '[' {
		return false
	}
	p.i++
	buf := make([]int, n)
	used := 0
	for peg := range 3 {
		p.space()
		k := p.flat(buf[used:])
		if k < 0 {
			return false
		}
		s[peg] = buf[used : used+k : used+k]
		used += k
		p.space()
		if p.i >= len(p.s) {
			return false
		}
		switch {
		case peg < 2 && p.s[p.i] == ',':
			p.i++
		case peg == 2 && p.s[p.i] == ']':
			p.i++
		default:
			return false
		}
	}
	return true
}

// fastPrompt is ParsePrompt's fast path over its two lines' texts: a
// state of plain integer lists read straight into ints, and "none..." or
// a move of three; ok false leaves the texts to the general path
// (slowPrompt), which decides with its own error messages. What it
// accepts, the general path accepts with the same state and move
// (TestFastPromptAgrees).
func fastPrompt(stateText, prevText string) (s State, prev *Move, ok bool) {
	p := intScanner{s: stateText}
	if !p.state(&s, MaxDisks) || p.i != len(stateText) {
		return State{}, nil, false
	}
	if !validState(s, len(s[0])+len(s[1])+len(s[2])) {
		return State{}, nil, false
	}
	if strings.HasPrefix(prevText, "none") {
		return s, nil, true
	}
	var mv [3]int
	q := intScanner{s: prevText}
	if q.flat(mv[:]) != 3 || q.i != len(prevText) {
		return State{}, nil, false
	}
	return s, &Move{mv[0], mv[1], mv[2]}, true
}
