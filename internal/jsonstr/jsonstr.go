// Package jsonstr writes a Go string as a JSON string exactly as
// encoding/json does, without reflection or allocation, and checks that
// bytes are JSON as json.Valid does, without its scanner: one home for the
// hand-written encoders of the journal's lines and the engine's jobs.
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// jsonSafe[c] reports whether json.Marshal writes byte c of a string as
// it is: printable ASCII but for '"', '\\' and the HTML-sensitive <, >, &.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// Append appends s as a JSON string exactly as json.Marshal writes it:
// HTML-safe (<, >, & escaped), invalid UTF-8 as U+FFFD, U+2028 and U+2029
// escaped. A string with nothing to escape (a vote key, a field name) is
// copied whole. Cost: one pass over s; no allocation beyond b's growth.
func Append(b []byte, s string) []byte {
	i := 0
	for i < len(s) && jsonSafe[s[i]] {
		i++
	}
	b = append(b, '"')
	if i == len(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	return appendFrom(b, s, i)
}

// appendFrom appends the rest of a JSON string whose first i bytes need
// no escape, and its closing quote.
func appendFrom(b []byte, s string, i int) []byte {
	start := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
