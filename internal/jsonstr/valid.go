package jsonstr

// maxDepth is encoding/json's bound on nesting: json.Valid refuses a
// value nested deeper.
const maxDepth = 10000

// Valid reports whether data is one JSON value, with optional white space
// around it: exactly what json.Valid reports (its grammar, its nesting
// bound of 10,000 and, as it does, any byte from 0x20 up inside a string,
// valid UTF-8 or not; FuzzValid compares the two). It is for checking a
// hand-written encoder's output on a hot path: one pass without the
// scanner's call per byte, about a third of json.Valid's time on a short
// value (BenchmarkValid). No allocation for values nested up to 64 deep.
func Valid(data []byte) bool {
	var small [64]bool // the open containers: true for an object
	open := small[:0]
	n := len(data)
	i := space(data, 0)
	ok := true
	for {
		// A value starts at i.
		if i >= n {
			return false
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			if len(open) >= maxDepth {
				return false
			}
			obj := c == '{'
			if i++; i < n && data[i] <= ' ' {
				i = space(data, i)
			}
			if i < n && (obj && data[i] == '}' || !obj && data[i] == ']') {
				i++
				break // an empty container is a whole value
			}
			open = append(open, obj)
			if obj {
				if i, ok = member(data, i); !ok {
					return false
				}
			}
			continue
		case c == '"':
			i, ok = str(data, i)
		case c == '-' || c >= '0' && c <= '9':
			i, ok = number(data, i)
		case c == 't':
			i, ok = literal(data, i, "true")
		case c == 'f':
			i, ok = literal(data, i, "false")
		case c == 'n':
			i, ok = literal(data, i, "null")
		default:
			return false
		}
		if !ok {
			return false
		}
		// A value ended at i: close containers, or go on to the next.
		for {
			if i < n && data[i] <= ' ' {
				i = space(data, i)
			}
			if len(open) == 0 {
				return i == n
			}
			if i >= n {
				return false
			}
			obj := open[len(open)-1]
			if c := data[i]; c == ',' {
				if i++; i < n && data[i] <= ' ' {
					i = space(data, i)
				}
				if obj {
					if i, ok = member(data, i); !ok {
						return false
					}
				}
				break
			} else if obj && c == '}' || !obj && c == ']' {
				open = open[:len(open)-1]
				i++
				continue
			}
			return false
		}
	}
}

// space returns the index of the first byte at or after i that is not
// JSON white space.
func space(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// member reads an object member's name and colon at i and returns where
// its value starts (after white space), and whether they were there.
func member(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := str(data, i)
	if !ok {
		return i, false
	}
	if i < len(data) && data[i] <= ' ' {
		i = space(data, i)
	}
	if i >= len(data) || data[i] != ':' {
		return i, false
	}
	if i++; i < len(data) && data[i] <= ' ' {
		i = space(data, i)
	}
	return i, true
}

// str returns the index after the string starting at i (at its quote),
// and whether it is a string.
func str(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i++; i >= len(data) {
				return i, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return i, false
				}
				for _, h := range data[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

// number returns the index after the number starting at i, and whether it
// is one: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func number(data []byte, i int) (int, bool) {
	n := len(data)
	if data[i] == '-' {
		if i++; i >= n {
			return i, false
		}
	}
	switch {
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		for i++; i < n && isDigit(data[i]); i++ {
		}
	default:
		return i, false
	}
	if i < n && data[i] == '.' {
		if i++; i >= n || !isDigit(data[i]) {
			return i, false
		}
		i = digits(data, i+1)
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		if i++; i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n || !isDigit(data[i]) {
			return i, false
		}
		i = digits(data, i+1)
	}
	return i, true
}

func digits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// literal returns the index after word at i, and whether word is there.
func literal(data []byte, i int, word string) (int, bool) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}
