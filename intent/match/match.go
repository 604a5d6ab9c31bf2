package match

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mdap-go/mdap/intent"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mdap-go/mdap/internal/fielderr"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Annotation is the JSON Schema keyword that declares, on a field of
// an answer schema, when two answers' values of that field mean the same:
//
//	"x-mdap-match": "exact"   the canonical JSON (the default)
//	"x-mdap-match": "text"    a string, after Unicode NFC, case folding,
//	                          white space collapsed and trimmed, and
//	                          trailing punctuation dropped
//	"x-mdap-match": "set"     an array whose order does not matter, as a
//	                          multiset: [a,a] is not [a]
//	"x-mdap-match": {"kind": "number", "tolerance": 0.01}
//	                          numbers at most tolerance apart (absolute)
//
// The object form also takes the other kinds ({"kind": "text"}).
const Annotation = "x-mdap-match"

// ErrMatcher: an answer schema's Annotation is not one this package
// takes, or sits where it cannot apply. The error is a *fielderr.Error
// naming the annotation's JSON Pointer in the schema.
var ErrMatcher = errors.New("bad matcher")

// Matcher says when two answers vote together beyond equal canonical
// forms, as an answer schema's Annotation declares per field. Build
// it once per schema with New. A nil *Matcher is exact matching:
// Key is intent.Key and Match is never needed.
//
// text and set are canonical forms: Key keys the answer after rewriting
// those fields, so equivalent answers get equal keys (transitive, no
// pairwise cost). number with a tolerance is not transitive (1.0 ~ 1.4 ~
// 1.8, but not 1.0 ~ 1.8), so it cannot be a key: Tolerant reports it, and
// Match is then the equivalence to race with (vote.RaceMatching), which
// forms classes in sample order.
//
// Safe for concurrent use.
type Matcher struct {
	root     *matchNode
	tolerant bool
}

type matchKind int

const (
	matchExact matchKind = iota
	matchText
	matchNumber
	matchSet
)

// matchNode is the matcher of one place in the answer: its own kind, and
// those of its properties and items (nil: exact below).
type matchNode struct {
	kind  matchKind
	tol   float64
	props map[string]*matchNode
	items *matchNode
}

// New builds the matcher an answer schema declares, walking
// "properties" and "items" from the root. It returns nil, nil when the
// schema declares nothing but exact matching. Errors: ErrMatcher (a
// *fielderr.Error naming the annotation's place) for an unknown kind, a
// kind not in this version (code, embedding, judge), a number without a
// positive finite tolerance, a kind whose "type" it cannot apply to, a
// number inside a set, or an annotation where the walk does not reach
// (under anyOf, $defs, ...), which would otherwise be silently ignored;
// ErrMalformed when schema is not JSON. Cost: one decode and one walk of
// the schema.
func New(schema []byte) (*Matcher, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: answer schema: %w", intent.ErrMalformed, err)
	}
	w := matchWalk{reached: map[string]bool{}}
	root, err := w.node(doc, "", false)
	if err != nil {
		return nil, err
	}
	// Every annotation must be one the walk reached.
	if err := strayAnnotation(doc, "", w.reached); err != nil {
		return nil, err
	}
	if root == nil {
		return nil, nil
	}
	return &Matcher{root: root, tolerant: w.tolerant}, nil
}

type matchWalk struct {
	reached  map[string]bool
	tolerant bool
}

func matchError(at string, value any, fix string) error {
	raw, _ := json.Marshal(value)
	return &fielderr.Error{Err: ErrMatcher, Config: "answer schema",
		Fields: []fielderr.Field{{Name: at + "/" + Annotation, Value: string(raw)}}, Fix: fix}
}

const matchFix = `give "exact", "text", "set" or {"kind": "number", "tolerance": 0.01}`

// node returns the matcher of schema s at pointer at, or nil when it and
// everything below it is exact.
func (w *matchWalk) node(s any, at string, inSet bool) (*matchNode, error) {
	obj, ok := s.(map[string]any)
	if !ok {
		return nil, nil
	}
	n := &matchNode{}
	if ann, ok := obj[Annotation]; ok {
		w.reached[at] = true
		kind, tol, err := parseAnnotation(ann)
		if err != nil {
			return nil, matchError(at, ann, err.Error())
		}
		if want := kindType[kind]; want != "" && !typeAllows(obj["type"], want) {
			return nil, matchError(at, ann, fmt.Sprintf("%q applies to %s values, and this field's \"type\" is %v", matchKindName[kind], want, obj["type"]))
		}
		if kind == matchNumber && inSet {
			return nil, matchError(at, ann, "a number tolerance inside a \"set\" is not supported: keep the set's items exact or text")
		}
		n.kind, n.tol = kind, tol
		if kind == matchNumber {
			w.tolerant = true
		}
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		for name, p := range props {
			c, err := w.node(p, at+"/properties/"+escapePointer(name), inSet)
			if err != nil {
				return nil, err
			}
			if c != nil {
				if n.props == nil {
					n.props = map[string]*matchNode{}
				}
				n.props[name] = c
			}
		}
	}
	if items, ok := obj["items"]; ok {
		c, err := w.node(items, at+"/items", inSet || n.kind == matchSet)
		if err != nil {
			return nil, err
		}
		n.items = c
	}
	if n.kind == matchExact && n.props == nil && n.items == nil {
		return nil, nil
	}
	return n, nil
}

var (
	matchKindName = map[matchKind]string{matchExact: "exact", matchText: "text", matchNumber: "number", matchSet: "set"}
	kindType      = map[matchKind]string{matchText: "string", matchNumber: "number", matchSet: "array"}
)

// typeAllows reports whether a schema's "type" (absent, a string or a
// list) admits values of type want.
func typeAllows(t any, want string) bool {
	allows := func(s any) bool { return s == want || want == "number" && s == "integer" }
	switch t := t.(type) {
	case nil:
		return true
	case []any:
		return slices.ContainsFunc(t, allows)
	default:
		return allows(t)
	}
}

func parseAnnotation(ann any) (matchKind, float64, error) {
	var kind any = ann
	var tol any
	if obj, ok := ann.(map[string]any); ok {
		for k := range obj {
			if k != "kind" && k != "tolerance" {
				return 0, 0, fmt.Errorf("unknown key %q: %s", k, matchFix)
			}
		}
		kind, tol = obj["kind"], obj["tolerance"]
	}
	name, ok := kind.(string)
	if !ok {
		return 0, 0, errors.New(matchFix)
	}
	switch name {
	case "exact", "text", "set":
		if tol != nil {
			return 0, 0, fmt.Errorf("%q takes no tolerance: %s", name, matchFix)
		}
		k := map[string]matchKind{"exact": matchExact, "text": matchText, "set": matchSet}[name]
		return k, 0, nil
	case "number":
		num, ok := tol.(json.Number)
		f, err := num.Float64()
		if !ok || err != nil || !(f > 0) || math.IsInf(f, 0) {
			return 0, 0, errors.New(`"number" needs a positive "tolerance" (absolute): {"kind": "number", "tolerance": 0.01}`)
		}
		return matchNumber, f, nil
	case "code", "embedding", "judge":
		return 0, 0, fmt.Errorf("%q is not in this version of mdap: %s", name, matchFix)
	default:
		return 0, 0, fmt.Errorf("%q is not a matcher: %s", name, matchFix)
	}
}

// strayAnnotation returns an error for the first annotation in doc (walked
// in full, keys in sorted order) that the matcher walk did not reach.
func strayAnnotation(doc any, at string, reached map[string]bool) error {
	switch v := doc.(type) {
	case map[string]any:
		if ann, ok := v[Annotation]; ok && !reached[at] {
			return matchError(at, ann, "x-mdap-match applies only where the walk from the root through \"properties\" and \"items\" reaches; move it there")
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := strayAnnotation(v[k], at+"/"+escapePointer(k), reached); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := strayAnnotation(e, at+"/"+strconv.Itoa(i), reached); err != nil {
				return err
			}
		}
	}
	return nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Tolerant reports whether m declares a number tolerance, so that Key
// alone does not say which answers vote together and a race needs Match.
// False for a nil m.
func (m *Matcher) Tolerant() bool { return m != nil && m.tolerant }

// Key returns o's vote key under m: intent.Key of o with its text fields
// rewritten to their normal form and its set fields sorted. An answer with
// a tool intent, and any answer under a nil m, is keyed by intent.Key
// exactly. Errors: those of Canonical. Cost: Canonical twice plus a decode
// and a walk of the value.
func (m *Matcher) Key(o intent.Output) (uint64, error) {
	if m == nil || o.Intent != nil {
		return intent.Key(o)
	}
	v, err := m.normal(o.Value)
	if err != nil {
		return 0, err
	}
	return intent.Key(intent.Output{Value: v})
}

// Match reports whether a and b vote together under m: true when their
// normal forms are equal but for numbers, under a declared tolerance, at
// most that far apart. It is reflexive and symmetric, not transitive;
// give it to vote.RaceMatching. Answers with tool intents match exactly
// when their keys are equal. Cost: Canonical and a decode of each answer
// and a walk of both.
func (m *Matcher) Match(a, b intent.Output) bool {
	if m == nil || a.Intent != nil || b.Intent != nil {
		ka, errA := m.Key(a)
		kb, errB := m.Key(b)
		return errA == nil && errB == nil && ka == kb
	}
	va, errA := m.normal(a.Value)
	vb, errB := m.normal(b.Value)
	return errA == nil && errB == nil && m.root.match(va, vb)
}

// normal returns v as decoded canonical JSON (json.Number numbers) with
// m's canonical forms applied.
func (m *Matcher) normal(v any) (any, error) {
	c, err := intent.Canonical(intent.Output{Value: v})
	if err != nil {
		return nil, err
	}
	if len(c) == 0 {
		return nil, nil
	}
	var g any
	dec := json.NewDecoder(bytes.NewReader(c))
	dec.UseNumber()
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("%w: %w", intent.ErrMalformed, err)
	}
	return m.root.normal(g), nil
}

func (n *matchNode) normal(v any) any {
	if n == nil {
		return v
	}
	switch v := v.(type) {
	case string:
		if n.kind == matchText {
			return NormalText(v)
		}
	case map[string]any:
		for k, c := range n.props {
			if e, ok := v[k]; ok {
				v[k] = c.normal(e)
			}
		}
	case []any:
		if n.items != nil {
			for i := range v {
				v[i] = n.items.normal(v[i])
			}
		}
		if n.kind == matchSet {
			slices.SortStableFunc(v, func(a, b any) int {
				ca, _ := json.Marshal(a)
				cb, _ := json.Marshal(b)
				return bytes.Compare(ca, cb)
			})
		}
	}
	return v
}

// match compares two normal forms under n (nil: equal canonical JSON).
func (n *matchNode) match(a, b any) bool {
	if n == nil {
		return sameJSON(a, b)
	}
	if n.kind == matchNumber {
		x, okA := a.(json.Number)
		y, okB := b.(json.Number)
		if okA && okB {
			fx, errX := x.Float64()
			fy, errY := y.Float64()
			if errX == nil && errY == nil {
				return math.Abs(fx-fy) <= n.tol
			}
		}
		return sameJSON(a, b)
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok || !n.props[k].match(x, y) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !n.items.match(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return sameJSON(a, b)
}

func sameJSON(a, b any) bool {
	ca, errA := json.Marshal(a)
	cb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ca, cb)
}

var fold = cases.Fold()

// NormalText is the normal form of the "text" matcher: Unicode NFC, case
// folded, runs of white space made one space, leading and trailing white
// space and trailing punctuation dropped. "Paris", "paris." and " PARIS "
// are all "paris". Cost: a few passes over s.
func NormalText(s string) string {
	s = norm.NFC.String(fold.String(norm.NFC.String(s)))
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
	return s
}
