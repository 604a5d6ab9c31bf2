package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/intent"
)

// heal returns v with every string that its schema wants as an array,
// object, number, integer or boolean, and that holds exactly such JSON,
// replaced by the decoded value. It appends the path of each healed value
// to healed. It never heals a string whose schema also accepts strings, nor
// one whose JSON is of another kind ("[1]" for a number stays a string, and
// validation reports it). It recurses into object properties (properties,
// then additionalProperties when it is a schema) and array items, also
// into freshly decoded values. It looks only at inline "type" keywords, not
// through $ref, anyOf or oneOf. v must be normalised JSON (see normalise);
// maps and slices of v are modified in place.
func heal(schema any, v any, path string, healed *[]string) any {
	sch, ok := schema.(map[string]any)
	if !ok {
		return v
	}
	if s, isStr := v.(string); isStr {
		if d, ok := decodeAs(s, schemaTypes(sch)); ok {
			*healed = append(*healed, path)
			v = d
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := sch["properties"].(map[string]any)
		extra, _ := sch["additionalProperties"].(map[string]any)
		for k, val := range x {
			sub, ok := props[k]
			if !ok {
				if extra == nil {
					continue
				}
				sub = extra
			}
			x[k] = heal(sub, val, childPath(path, k), healed)
		}
	case []any:
		items, ok := sch["items"].(map[string]any)
		if !ok {
			break
		}
		for i, val := range x {
			x[i] = heal(items, val, path+"["+strconv.Itoa(i)+"]", healed)
		}
	}
	return v
}

// schemaTypes returns the schema's "type" keyword as a list.
func schemaTypes(sch map[string]any) []string {
	switch t := sch["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// decodeAs decodes s as one JSON value (numbers as json.Number) and returns
// it when its kind is one of the wanted non-string types.
func decodeAs(s string, wants []string) (any, bool) {
	if len(wants) == 0 || slices.Contains(wants, "string") {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var d any
	if err := dec.Decode(&d); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // trailing data: not exactly one JSON value
	}
	for _, w := range wants {
		if kindMatches(d, w) {
			return integral(d, new(int)), true
		}
	}
	return nil, false
}

func kindMatches(d any, want string) bool {
	switch want {
	case "array":
		_, ok := d.([]any)
		return ok
	case "object":
		_, ok := d.(map[string]any)
		return ok
	case "boolean":
		_, ok := d.(bool)
		return ok
	case "number":
		_, ok := d.(json.Number)
		return ok
	case "integer":
		n, ok := d.(json.Number)
		if !ok {
			return false
		}
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	return false
}

// errArgsTooBig: the arguments encode to more bytes than allowed.
var errArgsTooBig = errors.New("arguments too big")

// normalise turns any JSON-encodable arguments into decoded JSON with
// json.Number numbers, a fresh copy the caller may change. Nil becomes an
// empty object. It also returns the size of the arguments encoded as JSON
// (over limit bytes it stops with errArgsTooBig) and whether that encoding
// differs from the copy's (an integral number rewritten). Cost: one marshal
// and one decode of args.
func normalise(args map[string]any, limit int) (out map[string]any, size int, changed bool, err error) {
	if args == nil {
		return map[string]any{}, 2, false, nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, 0, false, err
	}
	if len(b) > limit {
		return nil, len(b), false, errArgsTooBig
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, len(b), false, err
	}
	n := 0
	integral(out, &n)
	return out, len(b), n > 0, nil
}

// integral rewrites, in place, every json.Number in its canonical text
// (intent.CanonicalNumber: "2.0" and "1e3" become "2" and "1000"), the same
// JSON value, written one way: an integer in any notation is then what
// JSON Schema calls an integer and decodes into a Go int, and two spellings
// of a number give one argument. It adds to *n the numbers it rewrote.
func integral(v any, n *int) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = integral(e, n)
		}
	case []any:
		for i, e := range x {
			x[i] = integral(e, n)
		}
	case json.Number:
		if c, err := intent.CanonicalNumber(string(x)); err == nil && c != string(x) {
			*n++
			return json.Number(c)
		}
	}
	return v
}

// childPath renders the path of property k under path, model-readable:
// arguments.paths, arguments["odd key"].
func childPath(path, k string) string {
	if isIdent(k) {
		return path + "." + k
	}
	return path + "[" + strconv.Quote(k) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-'):
		default:
			return false
		}
	}
	return true
}
