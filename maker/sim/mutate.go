package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// MutateJSON returns text, a JSON value, with one leaf changed by variant:
// the first string leaf (depth first, object keys in sorted order) gets
// the suffix ".wrongN", or else the first number leaf is moved by N+1, or
// else, for an object, a key "wrong" is added; N is variant. Distinct
// variants give distinct values, and the result is JSON of the same shape
// wherever a leaf was changed. Errors wrap ErrUnknownPrompt when text is not
// one JSON value, or is a scalar other than a string or number. Cost:
// linear in the size of text.
func MutateJSON(text string, variant int) (string, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return "", fmt.Errorf("%w: the correct reply %q is not one JSON value, so no wrong one can be derived", ErrUnknownPrompt, abbreviate(text))
	}
	if leaf, ok := mutateLeaf(v, variant); ok {
		v = leaf
	} else if !mutate(v, variant) {
		m, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%w: the correct reply %q has no string or number to change", ErrUnknownPrompt, abbreviate(text))
		}
		m["wrong"] = variant
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func abbreviate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// mutate changes the first string or number leaf of v, depth first in
// sorted key order, and reports whether it found one.
func mutate(v any, variant int) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if changed, ok := mutateLeaf(x[k], variant); ok {
				x[k] = changed
				return true
			}
			if mutate(x[k], variant) {
				return true
			}
		}
	case []any:
		for i := range x {
			if changed, ok := mutateLeaf(x[i], variant); ok {
				x[i] = changed
				return true
			}
			if mutate(x[i], variant) {
				return true
			}
		}
	}
	return false
}

// mutateLeaf returns a wrong version of a string or number leaf.
func mutateLeaf(v any, variant int) (any, bool) {
	switch leaf := v.(type) {
	case string:
		return leaf + ".wrong" + strconv.Itoa(variant), true
	case json.Number:
		if i, err := leaf.Int64(); err == nil {
			return i + int64(variant) + 1, true
		}
		f, _ := leaf.Float64()
		return f + float64(variant+1), true
	}
	return nil, false
}
