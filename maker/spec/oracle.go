package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// ErrNoScript: the spec has no scripted reply for the prompt's step.
var ErrNoScript = errors.New("no scripted reply for this step")

// Oracle answers a spec task's prompts for the simulated model (it is a
// sim.Oracle): the correct reply at step n is Script[n]; a wrong reply is
// the same reply with its first string (or number) changed, so it is well
// formed and votes against the right one.
type Oracle struct{ Spec *Spec }

var stepRE = regexp.MustCompile(`(?m)^Step: (\d+)$`)

func (o Oracle) scripted(prompt string) (map[string]any, error) {
	m := stepRE.FindStringSubmatch(prompt)
	if m == nil {
		return nil, fmt.Errorf("%w: the prompt has no \"Step:\" line", ErrNoScript)
	}
	n, _ := strconv.Atoi(m[1])
	if n >= len(o.Spec.Script) {
		return nil, fmt.Errorf("%w: step %d, the script has %d", ErrNoScript, n, len(o.Spec.Script))
	}
	dec := json.NewDecoder(bytes.NewReader(o.Spec.Script[n]))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Correct returns the script's reply for the prompt's step.
func (o Oracle) Correct(prompt string) (string, error) {
	v, err := o.scripted(prompt)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// Wrong returns the script's reply with its first string leaf (in sorted
// key order) suffixed by the variant, or its first number leaf moved by
// variant+1, or a key "wrong" added.
func (o Oracle) Wrong(prompt string, variant int) (string, error) {
	v, err := o.scripted(prompt)
	if err != nil {
		return "", err
	}
	if !mutate(v, variant) {
		v["wrong"] = variant
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// mutate changes the first string or number leaf of v, depth first in
// sorted key order, and reports whether it found one.
func mutate(v any, variant int) bool {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
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
		f, _ := leaf.Float64()
		return f + float64(variant+1), true
	}
	return nil, false
}
