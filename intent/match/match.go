package match

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mdap-go/mdap/intent"

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
//	"x-mdap-match": "code" or {"kind": "code", "language": "go"}
//	                          source code after a normaliser: Go's own
//	                          (NormalGo: layout, comments, local names do
//	                          not count), other languages' from Options
//	"x-mdap-match": {"kind": "embedding", "threshold": 0.92, "model": "ollama:nomic-embed-text"}
//	                          strings whose embeddings' cosine similarity
//	                          is at least threshold ("model" and "url"
//	                          open an Embedder, unless Options gives one)
//	"x-mdap-match": {"kind": "judge", "model": "ollama:llama3", "seed": 1}
//	                          a Judge decides whether a value means the
//	                          same as an earlier class's (candidates in an
//	                          order shuffled from seed)
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
// Match is then the equivalence to race with (vote.RaceChoosing through vote.FirstMatch), which
// forms classes in sample order.
//
// Safe for concurrent use.
type Matcher struct {
	root     *matchNode
	tolerant bool
	// judge, when a field is judged: the Judge, the field's place (a
	// path of property names from the root) and the shuffle's seed.
	judge     Judge
	judgePath []string
	seed      uint64
}

// Options give New what an answer schema cannot: the embedder, the
// judge and code normalisers as values, and whether the schema may open
// models itself.
type Options struct {
	// Embedder embeds the strings of every "embedding" field; nil: the
	// annotation's "model" is opened with OpenEmbedder.
	Embedder Embedder
	// Judge decides the "judge" field; nil: the annotation's "model" is
	// opened with OpenJudge.
	Judge Judge
	// Normalizers are the "code" normalisers by language, beside (or in
	// place of) Go's own NormalGo.
	Normalizers map[string]Normalizer
	// NoModels refuses an annotation's "model" and "url": a schema from
	// a client (an MCP tool call) must not make the server call out.
	NoModels bool
}

type matchKind int

const (
	matchExact matchKind = iota
	matchText
	matchNumber
	matchSet
	matchCode
	matchEmbedding
	matchJudge
)

// matchNode is the matcher of one place in the answer: its own kind, and
// those of its properties and items (nil: exact below).
type matchNode struct {
	kind      matchKind
	tol       float64
	threshold float64    // embedding
	normalize Normalizer // code
	vecs      *vectors   // embedding
	props     map[string]*matchNode
	items     *matchNode
}

// New builds the matcher an answer schema declares, walking
// "properties" and "items" from the root, with default Options (an
// "embedding" or "judge" annotation opens its "model"). It returns nil,
// nil when the schema declares nothing but exact matching. Errors:
// ErrMatcher (a *fielderr.Error naming the annotation's place) for an
// unknown kind, a number without a positive finite tolerance, an
// embedding without a threshold in (0, 1] or a model, a code language
// without a normaliser, a kind whose "type" it cannot apply to, a
// number, embedding or judge inside a set, a judge under "items" or a
// second judge, or an annotation where the walk does not reach (under
// anyOf, $defs, ...), which would otherwise be silently ignored;
// ErrMalformed when schema is not JSON. Cost: one decode and one walk of
// the schema; opening a model calls nothing.
func New(schema []byte) (*Matcher, error) {
	return NewWith(schema, Options{})
}

// NewWith is New with opts. Errors: New's.
func NewWith(schema []byte, opts Options) (*Matcher, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: answer schema: %w", intent.ErrMalformed, err)
	}
	w := matchWalk{reached: map[string]bool{}, opts: opts}
	root, err := w.node(doc, "", false, []string{})
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
	return &Matcher{root: root, tolerant: w.tolerant, judge: w.judge, judgePath: w.judgePath, seed: w.seed}, nil
}

type matchWalk struct {
	reached   map[string]bool
	tolerant  bool
	opts      Options
	judge     Judge
	judgePath []string
	seed      uint64
	embedders map[string]*vectors // by model and url, one cache each
}

func matchError(at string, value any, fix string) error {
	raw, _ := json.Marshal(value)
	return &fielderr.Error{Err: ErrMatcher, Config: "answer schema",
		Fields: []fielderr.Field{{Name: at + "/" + Annotation, Value: string(raw)}}, Fix: fix}
}

const matchFix = `give "exact", "text", "set", "code", {"kind": "number", "tolerance": 0.01}, {"kind": "embedding", "threshold": 0.92, "model": "ollama:nomic-embed-text"} or {"kind": "judge", "model": "ollama:llama3"}`

// node returns the matcher of schema s at pointer at, or nil when it and
// everything below it is exact. path is the property names from the root
// (nil under "items").
func (w *matchWalk) node(s any, at string, inSet bool, path []string) (*matchNode, error) {
	obj, ok := s.(map[string]any)
	if !ok {
		return nil, nil
	}
	n := &matchNode{}
	if ann, ok := obj[Annotation]; ok {
		w.reached[at] = true
		a, err := parseAnnotation(ann)
		if err != nil {
			return nil, matchError(at, ann, err.Error())
		}
		kind, tol := a.kind, a.tol
		if want := kindType[kind]; want != "" && !typeAllows(obj["type"], want) {
			return nil, matchError(at, ann, fmt.Sprintf("%q applies to %s values, and this field's \"type\" is %v", matchKindName[kind], want, obj["type"]))
		}
		if (kind == matchNumber || kind == matchEmbedding || kind == matchJudge) && inSet {
			return nil, matchError(at, ann, fmt.Sprintf("%q inside a \"set\" is not supported: keep the set's items exact, text or code", matchKindName[kind]))
		}
		n.kind, n.tol, n.threshold = kind, tol, a.threshold
		if err := w.attach(n, a, at, ann, path); err != nil {
			return nil, err
		}
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		for _, name := range sortedKeys(props) { // a fixed order: errors name the same place every time
			p := props[name]
			var sub []string
			if path != nil {
				sub = append(slices.Clip(path), name)
			}
			c, err := w.node(p, at+"/properties/"+escapePointer(name), inSet, sub)
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
		c, err := w.node(items, at+"/items", inSet || n.kind == matchSet, nil)
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
	matchKindName = map[matchKind]string{matchExact: "exact", matchText: "text", matchNumber: "number", matchSet: "set",
		matchCode: "code", matchEmbedding: "embedding", matchJudge: "judge"}
	kindType = map[matchKind]string{matchText: "string", matchNumber: "number", matchSet: "array",
		matchCode: "string", matchEmbedding: "string"}
)

// attach gives node n what its kind needs beyond the annotation: a code
// normaliser, an embedder, the judge.
func (w *matchWalk) attach(n *matchNode, a annotation, at string, ann any, path []string) error {
	if (a.model != "" || a.url != "") && w.opts.NoModels {
		return matchError(at, ann, "this schema may not name a \"model\" or \"url\" (it comes from a client): the server gives the embedder or judge")
	}
	switch a.kind {
	case matchNumber:
		w.tolerant = true
	case matchCode:
		lang := a.language
		if f := w.opts.Normalizers[lang]; f != nil {
			n.normalize = f
		} else if lang == "go" {
			n.normalize = func(src string) (string, error) { return NormalGo(src), nil }
		} else {
			return matchError(at, ann, fmt.Sprintf("no normaliser for language %q: Go is built in; give others to the library (match.Options.Normalizers, match.CommandNormalizer)", lang))
		}
	case matchEmbedding:
		w.tolerant = true
		if w.opts.Embedder != nil {
			n.vecs = w.vectors("", func() (Embedder, error) { return w.opts.Embedder, nil })
			break
		}
		if a.model == "" && w.opts.NoModels {
			return matchError(at, ann, "no embedder here: this server gives none, and a client's schema may not name a model")
		}
		if a.model == "" {
			return matchError(at, ann, `an embedding needs a "model" ("ollama:nomic-embed-text", "openai:text-embedding-3-small") or a library Embedder (match.Options)`)
		}
		var err error
		key := a.model + " " + a.url
		if n.vecs, err = w.openVectors(key, a.model, a.url); err != nil {
			return matchError(at, ann, err.Error())
		}
	case matchJudge:
		w.tolerant = true
		if w.judgePath != nil {
			return matchError(at, ann, "one judge per answer: this schema already has one")
		}
		if path == nil {
			return matchError(at, ann, "a judge under \"items\" is not supported: judge the array's field as a whole")
		}
		j := w.opts.Judge
		if j == nil {
			if a.model == "" && w.opts.NoModels {
				return matchError(at, ann, "no judge here: this server gives none, and a client's schema may not name a model")
			}
			if a.model == "" {
				return matchError(at, ann, `a judge needs a "model" ("ollama:llama3") or a library Judge (match.Options)`)
			}
			var err error
			if j, err = OpenJudge(a.model, a.url); err != nil {
				return matchError(at, ann, err.Error())
			}
		}
		w.judge, w.judgePath, w.seed = j, slices.Clone(path), a.seed
	}
	return nil
}

// vectors returns the cache of the embedder named key, made by open the
// first time.
func (w *matchWalk) vectors(key string, open func() (Embedder, error)) *vectors {
	v, _ := w.openVectorsWith(key, open)
	return v
}

func (w *matchWalk) openVectors(key, model, url string) (*vectors, error) {
	return w.openVectorsWith(key, func() (Embedder, error) { return OpenEmbedder(model, url) })
}

func (w *matchWalk) openVectorsWith(key string, open func() (Embedder, error)) (*vectors, error) {
	if v, ok := w.embedders[key]; ok {
		return v, nil
	}
	e, err := open()
	if err != nil {
		return nil, err
	}
	if w.embedders == nil {
		w.embedders = map[string]*vectors{}
	}
	v := &vectors{embedder: e}
	w.embedders[key] = v
	return v, nil
}

// annotation is one parsed x-mdap-match.
type annotation struct {
	kind       matchKind
	tol        float64
	threshold  float64
	language   string
	model, url string
	seed       uint64
}

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

func parseAnnotation(ann any) (annotation, error) {
	var kind any = ann
	obj, _ := ann.(map[string]any)
	if obj != nil {
		kind = obj["kind"]
	}
	name, ok := kind.(string)
	if !ok {
		return annotation{}, errors.New(matchFix)
	}
	kinds := map[string]matchKind{"exact": matchExact, "text": matchText, "set": matchSet, "number": matchNumber,
		"code": matchCode, "embedding": matchEmbedding, "judge": matchJudge}
	k, ok := kinds[name]
	if !ok {
		return annotation{}, fmt.Errorf("%q is not a matcher: %s", name, matchFix)
	}
	takes := map[matchKind][]string{matchNumber: {"tolerance"}, matchCode: {"language"},
		matchEmbedding: {"threshold", "model", "url"}, matchJudge: {"model", "url", "seed"}}[k]
	for key := range obj {
		if key != "kind" && !slices.Contains(takes, key) {
			if len(takes) == 0 {
				return annotation{}, fmt.Errorf("unknown key %q: %q takes none: %s", key, name, matchFix)
			}
			return annotation{}, fmt.Errorf("unknown key %q: %q takes %s", key, name, strings.Join(takes, ", "))
		}
	}
	a := annotation{kind: k, language: "go"}
	str := func(key string) (string, error) {
		v, ok := obj[key]
		if !ok {
			return "", nil
		}
		s, ok := v.(string)
		if !ok || s == "" {
			return "", fmt.Errorf("%q of %q is a non-empty string", key, name)
		}
		return s, nil
	}
	var err error
	switch k {
	case matchNumber:
		num, ok := obj["tolerance"].(json.Number)
		f, ferr := num.Float64()
		if !ok || ferr != nil || !(f > 0) || math.IsInf(f, 0) {
			return a, errors.New(`"number" needs a positive "tolerance" (absolute): {"kind": "number", "tolerance": 0.01}`)
		}
		a.tol = f
	case matchCode:
		if l, err := str("language"); err != nil {
			return a, err
		} else if l != "" {
			a.language = strings.ToLower(l)
		}
	case matchEmbedding:
		num, ok := obj["threshold"].(json.Number)
		f, ferr := num.Float64()
		if !ok || ferr != nil || !(f > 0 && f <= 1) {
			return a, errors.New(`"embedding" needs a "threshold" in (0, 1], the least cosine similarity of two values that mean the same: {"kind": "embedding", "threshold": 0.92}`)
		}
		a.threshold = f
	case matchJudge:
		if v, ok := obj["seed"]; ok {
			num, _ := v.(json.Number)
			u, perr := strconv.ParseUint(num.String(), 10, 64)
			if perr != nil {
				return a, errors.New(`"seed" of "judge" is a non-negative integer`)
			}
			a.seed = u
		}
	}
	if k == matchEmbedding || k == matchJudge {
		if a.model, err = str("model"); err != nil {
			return a, err
		}
		if a.url, err = str("url"); err != nil {
			return a, err
		}
	}
	return a, nil
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

// Tolerant reports whether m is not a normal form alone: it declares a
// number tolerance, an embedding or a judge, so that Key alone does not
// say which answers vote together and a race needs Choose (or Match).
// False for a nil m.
func (m *Matcher) Tolerant() bool { return m != nil && m.tolerant }

// Key returns o's vote key under m: intent.Key of o with its text fields
// rewritten to their normal form, its set fields sorted and its code
// fields normalised. An answer with a tool intent, and any answer under a
// nil m, is keyed by intent.Key exactly. Errors: those of Canonical, and
// ErrNormalizer when a code normaliser fails. Cost: Canonical twice plus
// a decode and a walk of the value, plus the code normaliser.
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

// Match reports whether a and b vote together under m: Choose(a as the
// only class, b) with a background context, false when that fails.
// Reflexive and symmetric for text, set, code and number (not
// transitive); for an embedding or judge it calls the embedder or judge,
// so a race uses Choose, which takes the race's context and stops on an
// error. Answers with tool intents match exactly when their keys are
// equal.
func (m *Matcher) Match(a, b intent.Output) bool {
	i, err := m.Choose(context.Background(), []intent.Output{a}, b)
	return err == nil && i == 0
}

// Choose returns the index of the class among reps (earlier classes'
// first members, in creation order) that v joins, or -1: the first whose
// normal form matches v's (a number within its tolerance, an embedding
// at least its threshold); with a judge, the judge is asked among every
// such candidate whose judged field differs from v's, in an order
// shuffled from the annotation's seed and v's judged value, and a
// candidate equal on the judged field is taken without asking. It is the
// vote.Choose of a race (vote.RaceChoosing) and, given the same reps and
// v and a deterministic embedder and judge, always the same. Errors:
// ErrEmbedder, ErrJudge, ErrNormalizer, ctx's. Cost: a normal form per
// representative, plus for an embedding one call for the texts not
// cached, plus one judge call.
func (m *Matcher) Choose(ctx context.Context, reps []intent.Output, v intent.Output) (int, error) {
	if m == nil || v.Intent != nil {
		kv, err := m.Key(v)
		if err != nil {
			return -1, err
		}
		for i, r := range reps {
			if kr, err := m.Key(r); err == nil && kr == kv {
				return i, nil
			}
		}
		return -1, nil
	}
	nv, err := m.normal(v.Value)
	if err != nil {
		return -1, err
	}
	var cands []int
	var candVals []any
	for i, r := range reps {
		if r.Intent != nil {
			continue
		}
		nr, err := m.normal(r.Value)
		if err != nil {
			return -1, err
		}
		ok, err := m.root.same(ctx, nr, nv)
		if err != nil {
			return -1, err
		}
		if !ok {
			continue
		}
		if m.judge == nil {
			return i, nil
		}
		cands, candVals = append(cands, i), append(candVals, valueAt(nr, m.judgePath))
	}
	if len(cands) == 0 {
		return -1, nil
	}
	return m.judged(ctx, valueAt(nv, m.judgePath), cands, candVals)
}

// judged asks the judge which of the candidates (indices cands, judged
// values vals) a value a means the same as.
func (m *Matcher) judged(ctx context.Context, a any, cands []int, vals []any) (int, error) {
	for i, c := range vals {
		if sameJSON(c, a) {
			return cands[i], nil
		}
	}
	text := judgeText(a)
	order := shuffled(len(cands), m.seed, text)
	texts := make([]string, len(order))
	for j, i := range order {
		texts[j] = judgeText(vals[i])
	}
	j, err := m.judge.Same(ctx, text, texts)
	if err != nil {
		return -1, fmt.Errorf("%w: %w", ErrJudge, err)
	}
	if j < 0 {
		return -1, nil
	}
	if j >= len(order) {
		return -1, fmt.Errorf("%w: candidate %d of %d", ErrJudge, j, len(order))
	}
	return cands[order[j]], nil
}

// shuffled is a permutation of 0..n-1 drawn from seed and text: the
// candidates' order a judge sees, so that no class is favoured by its
// place, and the same for the same question.
func shuffled(n int, seed uint64, text string) []int {
	h := fnv.New64a()
	h.Write([]byte(text))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	return rng.Perm(n)
}

// judgeText is a judged value as the judge reads it: a string as is,
// anything else as canonical JSON.
func judgeText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// valueAt is the value at path (property names) in v; nil when absent.
func valueAt(v any, path []string) any {
	for _, p := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[p]
	}
	return v
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
	return m.root.normal(g)
}

func (n *matchNode) normal(v any) (any, error) {
	if n == nil {
		return v, nil
	}
	switch v := v.(type) {
	case string:
		switch n.kind {
		case matchText:
			return NormalText(v), nil
		case matchCode:
			out, err := n.normalize(v)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrNormalizer, err)
			}
			return out, nil
		}
	case map[string]any:
		for k, c := range n.props {
			if e, ok := v[k]; ok {
				nv, err := c.normal(e)
				if err != nil {
					return nil, err
				}
				v[k] = nv
			}
		}
	case []any:
		if n.items != nil {
			for i := range v {
				nv, err := n.items.normal(v[i])
				if err != nil {
					return nil, err
				}
				v[i] = nv
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
	return v, nil
}

// same compares two normal forms under n (nil: equal canonical JSON); a
// judged field always matches here (the judge decides after).
func (n *matchNode) same(ctx context.Context, a, b any) (bool, error) {
	if n == nil {
		return sameJSON(a, b), nil
	}
	switch n.kind {
	case matchJudge:
		return true, nil
	case matchNumber:
		x, okA := a.(json.Number)
		y, okB := b.(json.Number)
		if okA && okB {
			fx, errX := x.Float64()
			fy, errY := y.Float64()
			if errX == nil && errY == nil {
				return math.Abs(fx-fy) <= n.tol, nil
			}
		}
		return sameJSON(a, b), nil
	case matchEmbedding:
		x, okA := a.(string)
		y, okB := b.(string)
		if !okA || !okB || x == y {
			return sameJSON(a, b), nil
		}
		vs, err := n.vecs.of(ctx, x, y)
		if err != nil {
			return false, err
		}
		return Cosine(vs[0], vs[1]) >= n.threshold, nil
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false, nil
		}
		for _, k := range sortedKeys(a) {
			y, ok := b[k]
			if !ok {
				return false, nil
			}
			if same, err := n.props[k].same(ctx, a[k], y); err != nil || !same {
				return false, err
			}
		}
		return true, nil
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false, nil
		}
		for i := range a {
			if same, err := n.items.same(ctx, a[i], b[i]); err != nil || !same {
				return false, err
			}
		}
		return true, nil
	}
	return sameJSON(a, b), nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
