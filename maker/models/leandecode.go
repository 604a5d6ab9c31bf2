package models

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The lean reply decoder: a chat completion decoded into a leanReply
// without reflection. It takes only what it is sure encoding/json would
// decode the same way: a first JSON value that is an object, valid all
// through (the values it skips included), every known key spelt exactly
// and at most once per object, every known value of its field's type (a
// string, an integer within int64, an object, an array, or null). Any
// other input (a key matching a field only case-insensitively, a
// duplicate, a number like 1.0 or 1e3 for a count, a syntax error, deep
// nesting) makes it report false, and the caller decodes with
// encoding/json, which then gives its result or its error. What follows
// the first value is ignored, as json.Decoder does.

// maxFastDepth bounds the nesting the fast decoder follows; deeper input
// goes to encoding/json.
const maxFastDepth = 256

// replyScanner reads one JSON text.
type replyScanner struct {
	b     []byte
	i     int
	depth int
}

// decodeLeanReply decodes b into r when the fast decoder can; false
// otherwise, with r in an unspecified state.
func decodeLeanReply(b []byte, r *leanReply) bool {
	s := replyScanner{b: b}
	s.ws()
	if s.peek() != '{' {
		return false
	}
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return once(&seen, 1) && s.choices(&r.Choices)
		case "usage":
			return once(&seen, 2) && s.nullOr(func() bool { return s.usage(&r.Usage) })
		}
		return s.unknown(key, "choices", "usage")
	})
}

// once reports whether bit was not yet set in seen, and sets it.
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

func (s *replyScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *replyScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// literal consumes lit if it is next.
func (s *replyScanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// object reads an object, calling member for each key with the scanner
// at its value; member consumes the value.
func (s *replyScanner) object(member func(key []byte) bool) bool {
	if s.depth++; s.depth > maxFastDepth {
		return false
	}
	defer func() { s.depth-- }()
	s.i++ // '{'
	s.ws()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		key, ok := s.key()
		if !ok {
			return false
		}
		s.ws()
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.ws()
		if !member(key) {
			return false
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// key reads an object key of printable ASCII without escapes (others go
// to encoding/json, which folds case and Unicode). The key is a slice of
// the input, not a copy: the member reading it must not keep it.
func (s *replyScanner) key() ([]byte, bool) {
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// unknown skips the value of a key that is none of names, unless it
// matches one of them case-insensitively (encoding/json would decode it).
// key is ASCII (see key), so ASCII case folding is Unicode's here.
func (s *replyScanner) unknown(key []byte, names ...string) bool {
	for _, n := range names {
		if equalFoldASCII(key, n) {
			return false
		}
	}
	return s.skip()
}

// equalFoldASCII reports whether the ASCII key equals name under ASCII
// case folding.
func equalFoldASCII(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range len(key) {
		a, b := key[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// nullOr consumes null, or reads a value with read.
func (s *replyScanner) nullOr(read func() bool) bool {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	if s.peek() != '{' {
		return false
	}
	return read()
}

// array reads an array (or null, which sets *isNull), calling elem for
// each element with the scanner at it.
func (s *replyScanner) array(isNull *bool, elem func() bool) bool {
	if s.peek() == 'n' {
		*isNull = true
		return s.literal("null")
	}
	if s.peek() != '[' {
		return false
	}
	if s.depth++; s.depth > maxFastDepth {
		return false
	}
	defer func() { s.depth-- }()
	s.i++
	s.ws()
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// choices reads the choices into *dst's backing array while it has room
// (the caller may give one on its stack), else a new one.
func (s *replyScanner) choices(dst *[]leanChoice) bool {
	out := (*dst)[:0]
	if out == nil {
		out = []leanChoice{}
	}
	isNull := false
	ok := s.array(&isNull, func() bool {
		out = append(out, leanChoice{})
		c := &out[len(out)-1]
		return s.nullOr(func() bool {
			var seen uint8
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "message":
					return once(&seen, 1) && s.nullOr(func() bool { return s.message(&c.Message) })
				case "finish_reason":
					return once(&seen, 2) && s.finishReason(&c.FinishReason)
				}
				return s.unknown(key, "message", "finish_reason")
			})
		})
	})
	if isNull {
		out = nil
	}
	*dst = out
	return ok
}

func (s *replyScanner) message(m *leanMessage) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return once(&seen, 1) && s.str(&m.Content)
		case "reasoning_content":
			return once(&seen, 2) && s.str(&m.ReasoningContent)
		case "tool_calls":
			return once(&seen, 4) && s.toolCalls(&m.ToolCalls)
		case "function_call":
			if !once(&seen, 8) {
				return false
			}
			if s.peek() == 'n' {
				m.FunctionCall = nil
				return s.literal("null")
			}
			m.FunctionCall = &leanFunction{}
			return s.nullOr(func() bool { return s.function(m.FunctionCall) })
		}
		return s.unknown(key, "content", "reasoning_content", "tool_calls", "function_call")
	})
}

func (s *replyScanner) toolCalls(dst *[]leanToolCall) bool {
	out := []leanToolCall{}
	isNull := false
	ok := s.array(&isNull, func() bool {
		out = append(out, leanToolCall{})
		tc := &out[len(out)-1]
		return s.nullOr(func() bool {
			var seen uint8
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "id":
					return once(&seen, 1) && s.str(&tc.ID)
				case "type":
					return once(&seen, 2) && s.str(&tc.Type)
				case "function":
					return once(&seen, 4) && s.nullOr(func() bool { return s.function(&tc.Function) })
				}
				return s.unknown(key, "id", "type", "function")
			})
		})
	})
	if isNull {
		out = nil
	}
	*dst = out
	return ok
}

func (s *replyScanner) function(f *leanFunction) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return once(&seen, 1) && s.str(&f.Name)
		case "arguments":
			return once(&seen, 2) && s.str(&f.Arguments)
		}
		return s.unknown(key, "name", "arguments")
	})
}

func (s *replyScanner) usage(u *leanUsage) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return once(&seen, 1) && s.integer(&u.PromptTokens)
		case "completion_tokens":
			return once(&seen, 2) && s.integer(&u.CompletionTokens)
		case "total_tokens":
			return once(&seen, 4) && s.integer(&u.TotalTokens)
		case "prompt_tokens_details":
			return once(&seen, 8) && s.nullOr(func() bool {
				var seen uint8
				d := &u.PromptTokensDetails
				return s.object(func(key []byte) bool {
					switch string(key) {
					case "cached_tokens":
						return once(&seen, 1) && s.integer(&d.CachedTokens)
					case "audio_tokens":
						return once(&seen, 2) && s.integer(&d.AudioTokens)
					}
					return s.unknown(key, "cached_tokens", "audio_tokens")
				})
			})
		case "completion_tokens_details":
			return once(&seen, 16) && s.nullOr(func() bool {
				var seen uint8
				d := &u.CompletionTokensDetails
				return s.object(func(key []byte) bool {
					switch string(key) {
					case "reasoning_tokens":
						return once(&seen, 1) && s.integer(&d.ReasoningTokens)
					case "audio_tokens":
						return once(&seen, 2) && s.integer(&d.AudioTokens)
					case "accepted_prediction_tokens":
						return once(&seen, 4) && s.integer(&d.AcceptedPredictionTokens)
					case "rejected_prediction_tokens":
						return once(&seen, 8) && s.integer(&d.RejectedPredictionTokens)
					}
					return s.unknown(key, "reasoning_tokens", "audio_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens")
				})
			})
		}
		return s.unknown(key, "prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details")
	})
}

// integer reads an integer (or null, which leaves *dst): -?(0|[1-9][0-9]*)
// within int64, not followed by a fraction or an exponent.
func (s *replyScanner) integer(dst *int) bool {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	start := s.i
	if s.peek() == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == digits || (s.b[digits] == '0' && s.i > digits+1) {
		return false
	}
	if c := s.peek(); c == '.' || c == 'e' || c == 'E' {
		return false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	if err != nil || int64(int(n)) != n {
		return false
	}
	*dst = int(n)
	return true
}

// str reads a string (or null, which leaves *dst).
func (s *replyScanner) str(dst *string) bool {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	if s.peek() != '"' {
		return false
	}
	v, ok := s.stringValue(true)
	if ok {
		*dst = v
	}
	return ok
}

// finishReasons are the finish reasons OpenAI documents, which
// finishReason returns without a copy.
var finishReasons = [...]string{"stop", "length", "tool_calls", "content_filter", "function_call"}

// finishReason reads a string as str does; a finish reason of
// finishReasons, spelt without escapes, is that constant rather than a
// string allocated per choice.
func (s *replyScanner) finishReason(dst *string) bool {
	if s.peek() == '"' {
		rest := s.b[s.i+1:]
		for _, r := range finishReasons {
			if len(rest) > len(r) && rest[len(r)] == '"' && string(rest[:len(r)]) == r {
				s.i += len(r) + 2
				*dst = r
				return true
			}
		}
	}
	return s.str(dst)
}

// stringValue reads the string at the scanner, unquoted as encoding/json
// unquotes it (invalid UTF-8 and lone surrogates become U+FFFD), when
// keep; else only checks it.
func (s *replyScanner) stringValue(keep bool) (string, bool) {
	start := s.i + 1
	j := start
	plain := true
	for ; j < len(s.b); j++ {
		c := s.b[j]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return "", false
		}
		if c == '\\' {
			plain = false
			j++
			if j == len(s.b) {
				return "", false
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if hex4(s.b[j+1:]) < 0 {
					return "", false
				}
				j += 4
			default:
				return "", false
			}
		} else if c >= utf8.RuneSelf {
			plain = false
		}
	}
	if j >= len(s.b) {
		return "", false
	}
	s.i = j + 1
	if !keep {
		return "", true
	}
	raw := s.b[start:j]
	if plain {
		return string(raw), true
	}
	return unquote(raw), true
}

// hex4 is the value of the four hex digits b starts with, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unquote decodes the inside of a valid JSON string as encoding/json's
// unquoteBytes does.
func unquote(s []byte) string {
	// Built in place (a Builder's String does not copy): one allocation,
	// unless invalid bytes (each replaced by three) outgrow the slack.
	var b strings.Builder
	b.Grow(len(s) + 2*utf8.UTFMax)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			r++
			switch s[r] {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				rr := hex4(s[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != unicode.ReplacementChar {
							b.WriteRune(dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b.WriteRune(rr)
				continue
			default: // '"', '\\', '/'
				b.WriteByte(s[r])
			}
			r++
		case c < utf8.RuneSelf:
			end := r + 1 // a run of plain ASCII, written at once
			for end < len(s) && s[end] != '\\' && s[end] < utf8.RuneSelf {
				end++
			}
			b.Write(s[r:end])
			r = end
		default:
			rr, size := utf8.DecodeRune(s[r:])
			if rr == utf8.RuneError && size == 1 {
				b.WriteRune(unicode.ReplacementChar)
			} else {
				b.Write(s[r : r+size])
			}
			r += size
		}
	}
	return b.String()
}

// skip checks and passes over any JSON value.
func (s *replyScanner) skip() bool {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		var isNull bool
		return s.array(&isNull, s.skip)
	case c == '"':
		_, ok := s.stringValue(false)
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return false
}

// number passes over a JSON number.
func (s *replyScanner) number() bool {
	if s.peek() == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	start := s.i
	if n := digits(); n == 0 || (s.b[start] == '0' && n > 1) {
		return false
	}
	if s.peek() == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
