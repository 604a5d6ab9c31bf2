package intent

import (
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of JSON arrays and objects that Parse,
// FromToolCalls, Key and Canonical accept; deeper input is [ErrMalformed].
// It bounds recursion, so no reply can exhaust the stack.
const MaxDepth = 512

// syntaxError is a JSON decoding failure at a byte offset of the decoded
// text. It is wrapped in ErrMalformed by the callers.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.off) }

// decoder is a strict, single-pass JSON decoder (RFC 8259) producing the
// value types documented on Output: map[string]any, []any, string,
// json.Number (canonical text), bool and nil.
//
// It is stricter than encoding/json where a laxer reading would let two
// different texts vote together or change the data a caller re-marshals:
// duplicate object keys, invalid UTF-8 and lone surrogate escapes are
// errors, not silently replaced. It runs in time linear in its input and
// recurses at most MaxDepth levels.
type decoder struct {
	s     string
	i     int
	depth int
}

// decodeJSON decodes s, which must hold exactly one JSON value surrounded
// by optional white space.
func decodeJSON(s string) (any, error) {
	d := decoder{s: s}
	d.skipSpace()
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.i < len(d.s) {
		return nil, d.errorf("unexpected %s after the JSON value", d.describe())
	}
	return v, nil
}

func (d *decoder) errorf(format string, args ...any) error {
	return &syntaxError{off: d.i, msg: fmt.Sprintf(format, args...)}
}

// describe names the byte at the current offset for an error message.
func (d *decoder) describe() string {
	if d.i >= len(d.s) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(d.s[d.i:])
	if r == utf8.RuneError {
		return fmt.Sprintf("byte %#02x", d.s[d.i])
	}
	return fmt.Sprintf("character %q", r)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (d *decoder) skipSpace() {
	for d.i < len(d.s) && isSpace(d.s[d.i]) {
		d.i++
	}
}

func (d *decoder) value() (any, error) {
	if d.i >= len(d.s) {
		return nil, d.errorf("unexpected end of input, want a JSON value")
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	default:
		return nil, d.errorf("unexpected %s, want a JSON value", d.describe())
	}
}

func (d *decoder) literal(lit string) error {
	if len(d.s)-d.i >= len(lit) && d.s[d.i:d.i+len(lit)] == lit {
		d.i += len(lit)
		return nil
	}
	return d.errorf("invalid literal, want %s", lit)
}

func (d *decoder) enter() error {
	d.depth++
	if d.depth > MaxDepth {
		return d.errorf("nesting deeper than %d", MaxDepth)
	}
	return nil
}

func (d *decoder) object() (any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.i++ // '{'
	m := map[string]any{}
	d.skipSpace()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		d.depth--
		return m, nil
	}
	for {
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, d.errorf("unexpected %s, want an object key", d.describe())
		}
		keyAt := d.i
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, &syntaxError{off: keyAt, msg: fmt.Sprintf("duplicate object key %q", k)}
		}
		d.skipSpace()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, d.errorf("unexpected %s, want ':'", d.describe())
		}
		d.i++
		d.skipSpace()
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.skipSpace()
		if d.i < len(d.s) {
			switch d.s[d.i] {
			case ',':
				d.i++
				d.skipSpace()
				continue
			case '}':
				d.i++
				d.depth--
				return m, nil
			}
		}
		return nil, d.errorf("unexpected %s, want ',' or '}'", d.describe())
	}
}

func (d *decoder) array() (any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	d.i++ // '['
	a := []any{}
	d.skipSpace()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		d.depth--
		return a, nil
	}
	for {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.skipSpace()
		if d.i < len(d.s) {
			switch d.s[d.i] {
			case ',':
				d.i++
				d.skipSpace()
				continue
			case ']':
				d.i++
				d.depth--
				return a, nil
			}
		}
		return nil, d.errorf("unexpected %s, want ',' or ']'", d.describe())
	}
}

// str decodes a JSON string starting at the opening quote.
func (d *decoder) str() (string, error) {
	start := d.i + 1
	// Fast path: no escapes, ASCII or valid UTF-8, no control characters.
	for j := start; j < len(d.s); j++ {
		c := d.s[j]
		if c == '"' {
			s := d.s[start:j]
			if !utf8.ValidString(s) {
				break
			}
			d.i = j + 1
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	buf := make([]byte, 0, 16)
	d.i = start
	for {
		if d.i >= len(d.s) {
			return "", d.errorf("unterminated string")
		}
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return string(buf), nil
		case c < 0x20:
			return "", d.errorf("control character %#02x in string", c)
		case c == '\\':
			if err := d.escape(&buf); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			d.i++
		default:
			r, size := utf8.DecodeRuneInString(d.s[d.i:])
			if r == utf8.RuneError && size == 1 {
				return "", d.errorf("invalid UTF-8 in string")
			}
			buf = append(buf, d.s[d.i:d.i+size]...)
			d.i += size
		}
	}
}

// escape decodes one backslash escape and appends it to buf.
func (d *decoder) escape(buf *[]byte) error {
	if d.i+1 >= len(d.s) {
		d.i = len(d.s)
		return d.errorf("unterminated string")
	}
	c := d.s[d.i+1]
	switch c {
	case '"', '\\', '/':
		*buf = append(*buf, c)
	case 'b':
		*buf = append(*buf, '\b')
	case 'f':
		*buf = append(*buf, '\f')
	case 'n':
		*buf = append(*buf, '\n')
	case 'r':
		*buf = append(*buf, '\r')
	case 't':
		*buf = append(*buf, '\t')
	case 'u':
		r, ok := d.hex4(d.i + 2)
		if !ok {
			return d.errorf(`invalid \u escape`)
		}
		n := 6
		if utf16.IsSurrogate(r) {
			r2, ok2 := rune(0), false
			if d.i+7 < len(d.s) && d.s[d.i+6] == '\\' && d.s[d.i+7] == 'u' {
				r2, ok2 = d.hex4(d.i + 8)
			}
			r = utf16.DecodeRune(r, r2)
			if !ok2 || r == utf8.RuneError {
				return d.errorf(`lone UTF-16 surrogate in \u escape`)
			}
			n = 12
		}
		*buf = utf8.AppendRune(*buf, r)
		d.i += n
		return nil
	default:
		return d.errorf(`invalid escape '\%c' in string`, c)
	}
	d.i += 2
	return nil
}

func (d *decoder) hex4(at int) (rune, bool) {
	if at+4 > len(d.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(d.s[at : at+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number decodes a JSON number and returns it as a json.Number holding its
// canonical text (see canonicalNumber).
func (d *decoder) number() (any, error) {
	start := d.i
	j := d.i
	// The number's bytes, a leading '-' among them; canonicalNumber
	// checks their order.
	for j < len(d.s) {
		c := d.s[j]
		if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			j++
			continue
		}
		break
	}
	c, err := canonicalNumber(d.s[start:j])
	if err != nil {
		return nil, &syntaxError{off: start, msg: err.Error()}
	}
	d.i = j
	return json.Number(c), nil
}
