package hanoi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// maxListDepth bounds the nesting parseList accepts: a state is a list of
// lists.
const maxListDepth = 2

// parseList decodes s, which must be exactly one JSON array of numbers or
// of such arrays (nested at most maxListDepth deep), surrounded by optional
// white space. It returns []any holding json.Number and []any values, as
// encoding/json with UseNumber would, and rejects anything else: strings,
// null, objects, parentheses, trailing text. It is a fast path for the
// paper's format, which is all small integer lists; linear in len(s).
func parseList(s string) (any, error) {
	p := listParser{s: s}
	p.space()
	v, err := p.list(1)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, p.unexpected("the end after the list")
	}
	return v, nil
}

// parseListAt decodes the list that opens at s[i] (as parseList does) and
// returns it with the offset just after it; what follows is not read.
func parseListAt(s string, i int) (any, int, error) {
	p := listParser{s: s, i: i}
	v, err := p.list(1)
	if err != nil {
		return nil, 0, err
	}
	return v, p.i, nil
}

type listParser struct {
	s string
	i int
}

func (p *listParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *listParser) list(depth int) ([]any, error) {
	if p.i >= len(p.s) || p.s[p.i] != '[' {
		return nil, p.unexpected("'['")
	}
	p.i++
	out := []any{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return out, nil
	}
	for {
		p.space()
		switch {
		case p.i < len(p.s) && p.s[p.i] == '[':
			if depth >= maxListDepth {
				return nil, fmt.Errorf("lists nested deeper than %d", maxListDepth)
			}
			v, err := p.list(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		default:
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return out, nil
		}
		return nil, p.unexpected("',' or ']'")
	}
}

// number reads a JSON number (RFC 8259 grammar): an int for a plain
// integer of at most nine digits (boxing small ints costs no allocation),
// else a json.Number.
func (p *listParser) number() (any, error) {
	start := p.i
	digits := func() int {
		k := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		return p.i - k
	}
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	intStart := p.i
	if n := digits(); n == 0 || (n > 1 && p.s[intStart] == '0') {
		p.i = start
		return "", p.unexpected("a number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			p.i = start
			return nil, p.unexpected("a number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.i = start
			return nil, p.unexpected("a number")
		}
	}
	if lit := p.s[start:p.i]; p.i-intStart <= 9 && !strings.ContainsAny(lit, ".eE") {
		v := 0
		for _, c := range []byte(p.s[intStart:p.i]) {
			v = 10*v + int(c-'0')
		}
		if intStart > start {
			v = -v
		}
		return v, nil
	}
	return json.Number(p.s[start:p.i]), nil
}

func (p *listParser) unexpected(want string) error {
	if p.i >= len(p.s) {
		return fmt.Errorf("unexpected end, want %s", want)
	}
	rest := p.s[p.i:]
	if len(rest) > 12 {
		rest = rest[:12] + "..."
	}
	return fmt.Errorf("unexpected %q, want %s", rest, want)
}

// lastAssign returns the offset of the '[' that opens the list of the last
// `name = [` in text: name as a whole word (not preceded or followed by a
// letter, digit or '_'), then optional white space, '=', optional white
// space and '['. It walks the occurrences of name forward with
// strings.Index, which skips to each in vectorized code, and keeps the
// last that opens a list: strings.LastIndex hashes every byte from the
// end instead, the larger part of reading a short reply.
func lastAssign(text, name string) (at int, found bool) {
	for from := 0; ; {
		j := strings.Index(text[from:], name)
		if j < 0 {
			return at, found
		}
		j += from
		from = j + 1
		if k, ok := opensList(text, j, name); ok {
			at, found = k, true
		}
	}
}

// opensList reports whether the occurrence of name at j is a whole word
// followed by `= [`, and returns the offset of that '['.
func opensList(text string, j int, name string) (int, bool) {
	if j > 0 && isWordByte(text[j-1]) {
		return 0, false
	}
	k := j + len(name)
	for k < len(text) && isSpace(text[k]) {
		k++
	}
	if k >= len(text) || text[k] != '=' {
		return 0, false
	}
	k++
	for k < len(text) && isSpace(text[k]) {
		k++
	}
	if k < len(text) && text[k] == '[' {
		return k, true
	}
	return 0, false
}

func isWordByte(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// isSpace is the white space of RE2's \s: space, \t, \n, \v, \f, \r.
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
