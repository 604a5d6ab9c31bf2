package intent

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Kinds of canonical nodes.
const (
	kindNull uint8 = iota + 1
	kindFalse
	kindTrue
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is the canonical form of one JSON value, written out by appendNode.
// Every JSON type has its own Kind, so null is not 0 or "" or false, and
// "1" is not 1. Numbers are held as their canonical text (see
// CanonicalNumber), so 1, 1.0 and 1e0 are one node. Arrays are ordered
// slices, written in order, so [a,a], [a] and [] differ. Objects are two
// parallel slices sorted by key, so key order never matters. The text
// written from a node is an injective encoding of it: equal texts are
// equal nodes.
type node struct {
	Kind  uint8
	Str   string   // kindString: the string; kindNumber: canonical text
	Keys  []string // kindObject: the keys, sorted bytewise, no duplicates
	Items []node   // kindArray: the items; kindObject: the values, by Keys
}

// form is the canonical form of an Output, written out by Canonical (and
// so hashed by Key). The flags keep "value only", "intent only" and "both"
// apart. Rationale is deliberately absent. Without HasValue, Value is the
// zero node.
type form struct {
	HasValue  bool
	Value     node
	HasIntent bool
	Tool      string
	Args      node // kindObject, possibly empty; nil and empty Args are one
}

// canonicalForm builds and validates the canonical form of o.
func canonicalForm(o Output) (form, error) {
	var f form
	if o.Value != nil {
		v, err := toNode(o.Value, 0)
		if err != nil {
			return form{}, fmt.Errorf("%w: value: %w", ErrMalformed, err)
		}
		if v.Kind != kindNull {
			f.HasValue, f.Value = true, v
		}
	}
	if o.Intent == nil {
		if !f.HasValue {
			return form{}, fmt.Errorf("%w: the output has neither a value nor a tool intent", ErrNoAnswer)
		}
		if f.Value.Kind == kindObject {
			if _, ok := f.Value.lookup(keyToolIntent); ok {
				return form{}, fmt.Errorf("%w: the value has a %q key but the output has no intent", ErrAmbiguous, keyToolIntent)
			}
			if isBareIntent(f.Value.Keys) {
				return form{}, fmt.Errorf("%w: the value %s would be read as a bare tool intent", ErrAmbiguous, appendNode(nil, &f.Value))
			}
		}
		return f, nil
	}
	if f.HasValue {
		switch {
		case f.Value.Kind != kindObject:
			return form{}, fmt.Errorf("%w: a value beside a tool intent must be a JSON object, not %s", ErrAmbiguous, kindNames[f.Value.Kind])
		case len(f.Value.Keys) == 0:
			f.HasValue, f.Value = false, node{}
		default:
			for _, k := range []string{keyToolIntent, keyRationale} {
				if _, ok := f.Value.lookup(k); ok {
					return form{}, fmt.Errorf("%w: the value has a %q key beside the output's intent", ErrAmbiguous, k)
				}
			}
		}
	}
	if o.Intent.Tool == "" {
		return form{}, fmt.Errorf("%w: empty tool name", ErrInvalidIntent)
	}
	if !utf8.ValidString(o.Intent.Tool) {
		return form{}, fmt.Errorf("%w: tool name %q is not valid UTF-8", ErrInvalidIntent, o.Intent.Tool)
	}
	args, err := objectNode(o.Intent.Args, 0)
	if err != nil {
		return form{}, fmt.Errorf("%w: args: %w", ErrMalformed, err)
	}
	f.HasIntent, f.Tool, f.Args = true, o.Intent.Tool, args
	return f, nil
}

// kindNames names each Kind in an error message.
var kindNames = [...]string{kindNull: "null", kindFalse: "a boolean", kindTrue: "a boolean", kindNumber: "a number",
	kindString: "a string", kindArray: "an array", kindObject: "an object"}

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
	case int, int8, int16, int32, int64:
		return intNode(reflect.ValueOf(x).Int()), nil
	case uint, uint8, uint16, uint32, uint64:
		return uintNode(reflect.ValueOf(x).Uint()), nil
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
	x, err := decodeJSON(string(b))
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
