package jsonstr

// maxDepth is encoding/json's bound on nesting: json.Valid refuses a
// value nested deeper.
const maxDepth = 10000

// Valid reports whether data is one JSON value, with optional white space
// around it: exactly what json.Valid reports (its grammar, its nesting
// bound of 10,000 and, as it does, any byte from 0x20 up inside a string,
// valid UTF-8 or not; FuzzValid compares the two). It is for checking a
// hand-written encoder's output on a hot path: one pass without the
// scanner's call per byte, about a fifth of json.Valid's time on a short
// value. No allocation for values nested up to 64 deep.
func Valid(data []byte) bool {
	var small [64]bool // the open containers: true for an object
	open := small[:0]
	n := len(data)
	i := space(data, 0)
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
				if i = member(data, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = str(data, i); i < 0 {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = number(data, i); i < 0 {
				return false
			}
		case c == 't':
			if i = literal(data, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = literal(data, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = literal(data, i, "null"); i < 0 {
				return false
			}
		default:
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
					if i = member(data, i); i < 0 {
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
// its value starts (after white space), or -1.
func member(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = str(data, i); i < 0 {
		return -1
	}
	if i < len(data) && data[i] <= ' ' {
		i = space(data, i)
	}
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	if i++; i < len(data) && data[i] <= ' ' {
		i = space(data, i)
	}
	return i
}

// str returns the index after the string starting at i (at its quote),
// or -1.
func str(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i++; i >= len(data) {
				return -1
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return -1
				}
				for _, h := range data[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// number returns the index after the number starting at i, or -1:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func number(data []byte, i int) int {
	n := len(data)
	if data[i] == '-' {
		if i++; i >= n {
			return -1
		}
	}
	switch {
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		for i++; i < n && isDigit(data[i]); i++ {
		}
	default:
		return -1
	}
	if i < n && data[i] == '.' {
		if i++; i >= n || !isDigit(data[i]) {
			return -1
		}
		i = digits(data, i+1)
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		if i++; i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n || !isDigit(data[i]) {
			return -1
		}
		i = digits(data, i+1)
	}
	return i
}

func digits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// literal returns the index after word at i, or -1.
func literal(data []byte, i int, word string) int {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}
