package intent

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mitchellh/hashstructure/v2"
)

// Kinds of canonical nodes. The values are part of every key: never reorder.
const (
	kindNull uint8 = iota + 1
	kindFalse
	kindTrue
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is the canonical form of one JSON value, the only thing Key hashes
// (with form on top). Every JSON type has its own Kind, so null is not 0 or
// "" or false, and "1" is not 1. Numbers are held as their canonical text
// (see canonicalNumber), so 1, 1.0 and 1e0 are one node. Arrays are ordered
// slices, hashed in order, so [a,a], [a] and [] differ. Objects are two
// parallel slices sorted by key, so key order never matters. hashstructure
// sees no interface, map, pointer or set tag here: those are exactly the
// places where it hashes nil like 0, int like float differently, or lets
// duplicates cancel.
type node struct {
	Kind  uint8
	Str   string   // kindString: the string; kindNumber: canonical text
	Keys  []string // kindObject: the keys, sorted bytewise, no duplicates
	Items []node   // kindArray: the items; kindObject: the values, by Keys
}

// form is the canonical form of an Output, hashed by Key and written out by
// Canonical. The flags keep "value only", "intent only" and "both" apart.
// Rationale is deliberately absent.
type form struct {
	HasValue  bool
	Value     node
	HasIntent bool
	Tool      string
	Args      node // kindObject, possibly empty; nil and empty Args are one
}

// Key returns the vote key of o: two Outputs have the same key exactly when
// they mean the same step. It is a 64-bit FNV hash, computed with
// hashstructure/v2 (FormatV2) over o's canonical form, never over raw
// decoded JSON.
//
// Same key: JSON key order, white space, 1 versus 1.0 versus 1e0 (numbers
// compare by exact decimal value, big integers are never rounded), fenced
// versus inline versus whole-reply versus native tool call, any Rationale,
// nil versus empty Args, and, beside an Intent, a nil Value versus an empty
// object. Different key: null versus 0, "1" versus 1, [a,a] versus [a] versus
// [], another tool, another argument or argument value, and Value only
// versus Intent only versus both.
//
// The key depends only on o, not on the process, the platform or map
// iteration order. Different canonical forms collide with probability about
// 2^-64 per pair; use [Canonical] where an exact comparison is needed. Keys
// belong to this version of the canonical form: do not persist them as
// identities across upgrades of this package.
//
// Key accepts every Output that Parse and FromToolCalls return, and Outputs
// built by hand from the types listed on [Output] (plus float64, the integer
// kinds and anything encoding/json can marshal). Its errors are those of
// [Canonical]. Cost: linear in the size of o, but hashstructure reflects
// over every node: about 5 µs and 160 allocations for a small tool intent,
// 15 to 32 µs and 450 to 1000 allocations for a Hanoi step of 3 to 20 disks
// (see the package documentation for the figures and the alternative).
func Key(o Output) (uint64, error) {
	f, err := canonicalForm(o)
	if err != nil {
		return 0, err
	}
	return hashstructure.Hash(f, hashstructure.FormatV2, nil)
}

// Canonical returns o's canonical JSON text, for display, logs and exact
// comparison: object keys sorted bytewise, no white space, numbers in
// canonical form, strings with only '"', '\' and control characters
// escaped, Rationale dropped. Two Outputs have the same canonical text
// exactly when they have the same [Key] (up to hash collisions).
//
// The text is a reply Parse reads back to an Output with the same key and
// the same canonical text: a Value alone is written as itself; an Intent is
// written as {"tool_intent":{"args":{...},"tool":"..."}} with the members of
// an object Value beside it.
//
// Errors: [ErrNoAnswer] if o has neither a Value (other than JSON null) nor
// an Intent; [ErrInvalidIntent] if the Intent's Tool is empty; [ErrMalformed]
// if a value is not JSON (NaN, infinities, invalid UTF-8, channels, nesting
// deeper than [MaxDepth], ...); [ErrAmbiguous] if o cannot be written as one
// reply: a Value beside an Intent that is not a JSON object or that has a
// "tool_intent" key, or a Value alone that Parse would read as an intent (an
// object with a "tool_intent" key, or of the bare intent shape described in
// the package documentation). Parse never returns such an Output.
//
// Cost: linear in the size of o; under 1 µs and about 10 allocations for a
// Hanoi step.
func Canonical(o Output) ([]byte, error) {
	f, err := canonicalForm(o)
	if err != nil {
		return nil, err
	}
	return appendForm(nil, &f), nil
}

// canonicalForm builds and validates the canonical form of o.
func canonicalForm(o Output) (form, error) {
	var f form
	if o.Value != nil {
		v, err := toNode(o.Value, 0)
		if err != nil {
			return form{}, fmt.Errorf("%w: value: %w", ErrMalformed, err)
		}
		f.Value = v
		f.HasValue = v.Kind != kindNull
	}
	if o.Intent == nil {
		if !f.HasValue {
			return form{}, fmt.Errorf("%w: the output has neither a value nor a tool intent", ErrNoAnswer)
		}
		if f.Value.Kind == kindObject {
			if _, ok := f.Value.lookup(keyToolIntent); ok {
				return form{}, fmt.Errorf("%w: the value has a %q key but the output has no intent", ErrAmbiguous, keyToolIntent)
			}
			if looksLikeBareIntent(f.Value.Keys) {
				return form{}, fmt.Errorf("%w: the value %s would be read as a bare tool intent", ErrAmbiguous, appendNode(nil, &f.Value))
			}
		}
		return f, nil
	}
	if f.HasValue {
		switch {
		case f.Value.Kind != kindObject:
			return form{}, fmt.Errorf("%w: a value beside a tool intent must be a JSON object, not %s", ErrAmbiguous, kindName(f.Value.Kind))
		case len(f.Value.Keys) == 0:
			f.HasValue, f.Value = false, node{}
		default:
			if _, ok := f.Value.lookup(keyToolIntent); ok {
				return form{}, fmt.Errorf("%w: the value has a %q key beside the output's intent", ErrAmbiguous, keyToolIntent)
			}
		}
	}
	if o.Intent.Tool == "" {
		return form{}, fmt.Errorf("%w: empty tool name", ErrInvalidIntent)
	}
	if !utf8.ValidString(o.Intent.Tool) {
		return form{}, fmt.Errorf("%w: tool name %q is not valid UTF-8", ErrInvalidIntent, o.Intent.Tool)
	}
	f.HasIntent = true
	f.Tool = o.Intent.Tool
	args, err := objectNode(o.Intent.Args, 0)
	if err != nil {
		return form{}, fmt.Errorf("%w: args: %w", ErrMalformed, err)
	}
	f.Args = args
	return f, nil
}

func kindName(k uint8) string {
	switch k {
	case kindNull:
		return "null"
	case kindFalse, kindTrue:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	default:
		return "an object"
	}
}

// lookup returns the value of key k in object n.
func (n *node) lookup(k string) (*node, bool) {
	i, ok := slices.BinarySearch(n.Keys, k)
	if !ok {
		return nil, false
	}
	return &n.Items[i], true
}

var errDepth = fmt.Errorf("nesting deeper than %d", MaxDepth)

// toNode converts a decoded or hand-built value to its canonical node.
func toNode(v any, depth int) (node, error) {
	switch x := v.(type) {
	case nil:
		return node{Kind: kindNull}, nil
	case bool:
		if x {
			return node{Kind: kindTrue}, nil
		}
		return node{Kind: kindFalse}, nil
	case string:
		if !utf8.ValidString(x) {
			return node{}, fmt.Errorf("string %q is not valid UTF-8", x)
		}
		return node{Kind: kindString, Str: x}, nil
	case json.Number:
		c, err := canonicalNumber(string(x))
		if err != nil {
			return node{}, err
		}
		return node{Kind: kindNumber, Str: c}, nil
	case float64:
		return floatNode(x, 64)
	case float32:
		return floatNode(float64(x), 32)
	case int:
		return intNode(int64(x)), nil
	case int8:
		return intNode(int64(x)), nil
	case int16:
		return intNode(int64(x)), nil
	case int32:
		return intNode(int64(x)), nil
	case int64:
		return intNode(x), nil
	case uint:
		return uintNode(uint64(x)), nil
	case uint8:
		return uintNode(uint64(x)), nil
	case uint16:
		return uintNode(uint64(x)), nil
	case uint32:
		return uintNode(uint64(x)), nil
	case uint64:
		return uintNode(x), nil
	case map[string]any:
		if x == nil { // as json.Marshal writes it
			return node{Kind: kindNull}, nil
		}
		return objectNode(x, depth)
	case []any:
		if x == nil { // as json.Marshal writes it
			return node{Kind: kindNull}, nil
		}
		if depth >= MaxDepth {
			return node{}, errDepth
		}
		n := node{Kind: kindArray, Items: make([]node, len(x))}
		for i, e := range x {
			c, err := toNode(e, depth+1)
			if err != nil {
				return node{}, err
			}
			n.Items[i] = c
		}
		return n, nil
	default:
		return marshalNode(v, depth)
	}
}

// objectNode converts a JSON object; a nil map is the empty object (used
// directly for Args, where nil and empty mean "no arguments").
func objectNode(m map[string]any, depth int) (node, error) {
	if depth >= MaxDepth {
		return node{}, errDepth
	}
	n := node{Kind: kindObject}
	if len(m) == 0 {
		return n, nil
	}
	n.Keys = make([]string, 0, len(m))
	for k := range m {
		if !utf8.ValidString(k) {
			return node{}, fmt.Errorf("object key %q is not valid UTF-8", k)
		}
		n.Keys = append(n.Keys, k)
	}
	slices.Sort(n.Keys)
	n.Items = make([]node, len(n.Keys))
	for i, k := range n.Keys {
		c, err := toNode(m[k], depth+1)
		if err != nil {
			return node{}, err
		}
		n.Items[i] = c
	}
	return n, nil
}

// marshalNode handles any other Go value the way a caller's json.Marshal
// would see it: marshal, then decode strictly.
func marshalNode(v any, depth int) (node, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return node{}, fmt.Errorf("%T is not JSON: %w", v, err)
	}
	d := decoder{s: string(b), depth: depth}
	x, err := d.value()
	if err != nil {
		return node{}, fmt.Errorf("%T marshals to invalid JSON: %w", v, err)
	}
	return toNode(x, depth)
}

func floatNode(f float64, bits int) (node, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return node{}, fmt.Errorf("number %v is not JSON", f)
	}
	c, err := canonicalNumber(strconv.FormatFloat(f, 'g', -1, bits))
	if err != nil {
		return node{}, err
	}
	return node{Kind: kindNumber, Str: c}, nil
}

// intNode and uintNode: strconv's decimal integer text is already canonical
// (at most 20 digits, so never in exponent form, and never "-0").
func intNode(i int64) node   { return node{Kind: kindNumber, Str: strconv.FormatInt(i, 10)} }
func uintNode(u uint64) node { return node{Kind: kindNumber, Str: strconv.FormatUint(u, 10)} }

var errNumber = errors.New("invalid number")

// canonicalNumber validates a JSON number and returns its canonical text,
// which depends only on its exact decimal value: 1, 1.0, 1e0, 10e-1 and
// 0.1e1 are all "1"; -0 is "0". With the value written as 0.D × 10^n (D the
// significant digits, without leading or trailing zeros, k = len(D)), the
// text follows ECMAScript's Number::toString layout applied to the exact
// digits (nothing is rounded):
//
//	k ≤ n ≤ 21   D followed by n-k zeros          12300
//	0 < n ≤ 21   D with a point after n digits    123.45
//	-6 < n ≤ 0   "0." then -n zeros then D        0.000123
//	otherwise    D[0] "." D[1:] "e" sign (n-1)     1.5e+300, 1e-7
//
// So integers of up to 21 digits are written as plain integers (and
// unmarshal into Go integer types when they fit). An exponent literal of
// more than 9 significant digits is rejected as out of range.
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
		ed := strings.TrimLeft(s[es:i], "0")
		if len(ed) > 9 {
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
	digits := intPart
	if frac != "" {
		digits = intPart + frac
	}
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
	var b strings.Builder
	b.Grow(len(digits) + 24)
	if neg {
		b.WriteByte('-')
	}
	switch {
	case k <= n && n <= 21:
		b.WriteString(digits)
		for range n - k {
			b.WriteByte('0')
		}
	case 0 < n && n <= 21:
		b.WriteString(digits[:n])
		b.WriteByte('.')
		b.WriteString(digits[n:])
	case -6 < n && n <= 0:
		b.WriteString("0.")
		for range -n {
			b.WriteByte('0')
		}
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

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// appendForm writes the canonical JSON text of f: the Value alone, or an
// object holding the Value's members and "tool_intent", keys sorted.
func appendForm(b []byte, f *form) []byte {
	if !f.HasIntent {
		return appendNode(b, &f.Value)
	}
	b = append(b, '{')
	first, intentDone := true, false
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	writeIntent := func() {
		sep()
		b = appendString(b, keyToolIntent)
		b = append(b, `:{"args":`...)
		b = appendNode(b, &f.Args)
		b = append(b, `,"tool":`...)
		b = appendString(b, f.Tool)
		b = append(b, '}')
		intentDone = true
	}
	if f.HasValue {
		for i, k := range f.Value.Keys {
			if !intentDone && k > keyToolIntent {
				writeIntent()
			}
			sep()
			b = appendString(b, k)
			b = append(b, ':')
			b = appendNode(b, &f.Value.Items[i])
		}
	}
	if !intentDone {
		writeIntent()
	}
	return append(b, '}')
}

// appendNode writes the canonical JSON text of n.
func appendNode(b []byte, n *node) []byte {
	switch n.Kind {
	case kindNull:
		return append(b, "null"...)
	case kindFalse:
		return append(b, "false"...)
	case kindTrue:
		return append(b, "true"...)
	case kindNumber:
		return append(b, n.Str...)
	case kindString:
		return appendString(b, n.Str)
	case kindArray:
		b = append(b, '[')
		for i := range n.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNode(b, &n.Items[i])
		}
		return append(b, ']')
	default: // kindObject
		b = append(b, '{')
		for i, k := range n.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendNode(b, &n.Items[i])
		}
		return append(b, '}')
	}
}

const hexDigits = "0123456789abcdef"

// appendString writes s (valid UTF-8) as a JSON string, escaping only '"',
// '\' and control characters (as \b \f \n \r \t or \u00XX).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
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
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
