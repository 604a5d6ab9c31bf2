package intent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var errNumber = errors.New("invalid number")

// CanonicalNumber is the project's one exact-decimal number canonicaliser:
// it validates s as a JSON number (RFC 8259: optional '-', no leading
// zeros, no '+', no leading or trailing '.', no white space) and returns its
// canonical text, which depends only on its exact decimal value: 1, 1.0,
// 1e0, 10e-1 and 0.1e1 are all "1"; -0 and 0e5 are "0"; 2^53+1 stays
// 9007199254740993. Nothing is rounded, ever: two numbers have the same
// canonical text exactly when they have the same decimal value. Every
// number in a parsed [Output] holds this text, and CanonicalNumber of a
// canonical text returns it unchanged.
//
// With the value written as 0.D × 10^n (D the significant digits, without
// leading or trailing zeros, k = len(D)), the text follows ECMAScript's
// Number::toString layout applied to the exact digits:
//
//	k ≤ n ≤ 21   D followed by n-k zeros          12300
//	0 < n ≤ 21   D with a point after n digits    123.45
//	-6 < n ≤ 0   "0." then -n zeros then D        0.000123
//	otherwise    D[0] "." D[1:] "e" sign (n-1)     1.5e+300, 1e-7
//
// So integers of up to 21 digits are written as plain integers, which
// unmarshal into Go integer types when they fit, and any other value is
// one that strconv.ParseFloat reads as the same float64 as s.
//
// Errors wrap [ErrMalformed]: s is not a JSON number, or its value is out
// of range: n-1 above, the exponent of its scientific form, beyond
// ±999,999,999 (so 10e999999999 is refused like 1e1000000000, and
// 0.01e1000000001 is 1e+999999999). Cost: linear in len(s); no
// allocation when s is already a canonical integer.
func CanonicalNumber(s string) (string, error) {
	c, err := canonicalNumber(s)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return c, nil
}

// canonicalNumber is CanonicalNumber with errors wrapping errNumber only,
// for callers that wrap them in their own way.
func canonicalNumber(s string) (string, error) {
	i := 0
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	intStart := i
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return "", fmt.Errorf("%w %q", errNumber, s)
	}
	intPart := s[intStart:i]
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == fs {
			return "", fmt.Errorf("%w %q: no digit after '.'", errNumber, s)
		}
		frac = s[fs:i]
	}
	hasExp := false
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		hasExp = true
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == es {
			return "", fmt.Errorf("%w %q: no digit in exponent", errNumber, s)
		}
		// The range is checked on the canonical exponent below; 18
		// digits fit an int64 with room for any string's length.
		ed := strings.TrimLeft(s[es:i], "0")
		if len(ed) > 18 {
			return "", fmt.Errorf("%w %q: exponent out of range", errNumber, s)
		}
		for _, c := range []byte(ed) {
			exp = exp*10 + int64(c-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return "", fmt.Errorf("%w %q", errNumber, s)
	}
	// Fast path: a plain integer that is already canonical.
	if frac == "" && !hasExp && len(intPart) <= 21 && !(neg && intPart == "0") {
		return s, nil
	}
	digits := intPart + frac
	e := exp - int64(len(frac))
	digits = strings.TrimLeft(digits, "0")
	trimmed := strings.TrimRight(digits, "0")
	e += int64(len(digits) - len(trimmed))
	digits = trimmed
	if digits == "" {
		return "0", nil
	}
	k := int64(len(digits))
	n := k + e
	// The range is the canonical text's, so that every canonical text is
	// read back (10e999999999 is 1e+1000000000, out of range as that is).
	if n-1 > maxExponent || n-1 < -maxExponent {
		return "", fmt.Errorf("%w %q: exponent out of range", errNumber, s)
	}
	var b strings.Builder
	b.Grow(len(digits) + 24)
	if neg {
		b.WriteByte('-')
	}
	switch {
	case k <= n && n <= 21:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", int(n-k)))
	case 0 < n && n <= 21:
		b.WriteString(digits[:n])
		b.WriteByte('.')
		b.WriteString(digits[n:])
	case -6 < n && n <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", int(-n)))
		b.WriteString(digits)
	default:
		b.WriteByte(digits[0])
		if k > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if n-1 >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatInt(n-1, 10))
	}
	return b.String(), nil
}

// maxExponent bounds the exponent of a number's scientific form
// (CanonicalNumber): nine digits.
const maxExponent = 999_999_999

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
