package problems

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/mdap-go/mdap/internal/schema"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrSpec: a problem spec is not one (it says what is wrong and how to
// fix it).
var ErrSpec = errors.New("invalid problem spec")

// MaxSpecBytes bounds a problem spec file.
const MaxSpecBytes = 1 << 20

// Spec is a problem spec: a general family of problems for real models,
// declared in a JSON file instead of written in Go. It gives each role's
// prompt (what the problems mean and how the role does its part; the
// engine adds the reply format and the node's data) and the JSON Schemas
// of a problem's input and of its answer: a reply whose subproblem or
// answer breaks them is a red flag and does not vote.
//
//	{"name": "sum",
//	 "prompts": {"atomic": "...", "decompose": "...", "discriminate": "...",
//	             "solve": "...", "compose": "..."},
//	 "input":  {"type": "object", "properties": {"n": {"type": "array", "items": {"type": "integer"}}}, "required": ["n"]},
//	 "answer": {"type": "integer"}}
type Spec struct {
	// Name names the family in prompts, journals and results.
	Name string `json:"name"`
	// Prompts are the roles' instructions; every role the run uses needs
	// one (discriminate is used when proposals are not Structured).
	Prompts SpecPrompts `json:"prompts"`
	// Input and Answer are the JSON Schemas (draft 2020-12, no external
	// $ref) of a problem's input and of an answer.
	Input  json.RawMessage `json:"input"`
	Answer json.RawMessage `json:"answer"`
	// Checker, if set, is a JSON Schema that {"input": INPUT, "answer":
	// ANSWER} must satisfy for the root's answer to be correct: the
	// result's "correct". Without it (and without Family) the answer is
	// not checked.
	Checker json.RawMessage `json:"checker,omitempty"`
	// Structured votes proposals on their exact canonical form; false
	// (the default) has discriminator agents pick among them.
	Structured bool `json:"structured,omitempty"`
	// AtomicBytes makes an input of at most that many bytes (canonical
	// JSON) atomic without an atomicity vote; 0 means none is.
	AtomicBytes int `json:"atomic_bytes,omitempty"`
	// MaxDepth and MaxBreadth cap the tree (0: decompose's defaults, or
	// Family's).
	MaxDepth   int `json:"max_depth,omitempty"`
	MaxBreadth int `json:"max_breadth,omitempty"`
	// Family, if set, names a built-in family ("multiply", "sort") whose
	// problems the spec's are: the simulated model plays every role from
	// its truth (so a spec's prompts and schemas can be run offline), and
	// its exact checker checks the answer. Its indivisible inputs and caps
	// apply where the spec gives none.
	Family string `json:"family,omitempty"`

	input, answer, checker *jsonschema.Schema
	builtin                Family
	sum                    string
}

// SpecPrompts are a spec's role prompts.
type SpecPrompts struct {
	Atomic       string `json:"atomic"`
	Decompose    string `json:"decompose"`
	Discriminate string `json:"discriminate,omitempty"`
	Solve        string `json:"solve"`
	Compose      string `json:"compose"`
}

// LoadSpec reads and checks the problem spec file at path (ParseSpec).
// Errors: the file system's; ParseSpec's, naming the file.
func LoadSpec(path string) (*Spec, error) {
	b, err := safefile.ReadFile(path, MaxSpecBytes)
	if err != nil {
		return nil, err
	}
	s, err := ParseSpec(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSpec reads and checks a problem spec: unknown fields, a missing
// name or role prompt, a schema that does not compile, an unknown Family,
// caps out of range are errors wrapping ErrSpec. Cost: compiling three
// schemas.
func ParseSpec(b []byte) (*Spec, error) {
	if len(b) > MaxSpecBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrSpec, MaxSpecBytes)
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %v; a problem spec is a JSON object of name, prompts, input, answer and optional checker, structured, atomic_bytes, max_depth, max_breadth, family", ErrSpec, err)
	}
	bad := func(format string, a ...any) error { return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, a...)) }
	switch {
	case strings.TrimSpace(s.Name) == "" || strings.ContainsAny(s.Name, "\n\r"):
		return nil, bad(`"name" is missing: name the family in one line`)
	case s.Prompts.Atomic == "" || s.Prompts.Decompose == "" || s.Prompts.Solve == "" || s.Prompts.Compose == "":
		return nil, bad(`"prompts" needs "atomic", "decompose", "solve" and "compose" (and "discriminate" unless "structured" is true)`)
	case !s.Structured && s.Prompts.Discriminate == "":
		return nil, bad(`"prompts" needs "discriminate": proposals are picked by discriminator agents unless "structured" is true`)
	case s.AtomicBytes < 0:
		return nil, bad(`"atomic_bytes" is %d: use 0 or more`, s.AtomicBytes)
	case s.MaxDepth < 0 || s.MaxDepth > 30:
		return nil, bad(`"max_depth" is %d: use 1 to 30, or leave it out`, s.MaxDepth)
	case s.MaxBreadth != 0 && (s.MaxBreadth < 2 || s.MaxBreadth > 64):
		return nil, bad(`"max_breadth" is %d: use 2 to 64, or leave it out`, s.MaxBreadth)
	}
	var err error
	for _, c := range []struct {
		name string
		raw  json.RawMessage
		out  **jsonschema.Schema
	}{{"input", s.Input, &s.input}, {"answer", s.Answer, &s.answer}, {"checker", s.Checker, &s.checker}} {
		if c.raw == nil {
			if c.name == "checker" {
				continue
			}
			return nil, bad("%q is missing: give the JSON Schema of a problem's %s", c.name, c.name)
		}
		if *c.out, err = schema.Compile("problem/"+c.name, c.raw); err != nil {
			return nil, bad("%q: %v", c.name, err)
		}
	}
	if s.Family != "" {
		if s.builtin, err = Lookup(s.Family); err != nil {
			return nil, bad(`"family": %v`, err)
		}
	}
	sum := sha256.Sum256(b)
	s.sum = hex.EncodeToString(sum[:])
	return &s, nil
}

// Builtin is the built-in family the spec names (Family), or nil.
func (s *Spec) Builtin() Family { return s.builtin }

// AsFamily returns the spec as a decompose.Family (with
// decompose.Checker when it has a Checker or a Family, decompose.CapsFor
// when it has caps or a Family).
func (s *Spec) AsFamily() decompose.Family {
	f := specFamily{s}
	if s.checker != nil || s.builtin != nil {
		return checkedSpec{f}
	}
	return f
}

// specFamily is a Spec as a decompose.Family.
type specFamily struct{ s *Spec }

var (
	_ decompose.Family  = specFamily{}
	_ decompose.CapsFor = specFamily{}
	_ decompose.Checker = checkedSpec{}
)

func (f specFamily) Name() string { return f.s.Name }

// Fingerprint names the spec's text, so that a journal of one spec is
// not resumed with another of the same name and prompts.
func (f specFamily) Fingerprint() string { return f.s.sum }

// canonValid reads raw, checks it against sch and returns its canonical
// JSON (keys sorted, numbers kept exact).
func canonValid(sch *jsonschema.Schema, raw json.RawMessage, what string) (json.RawMessage, error) {
	doc, err := schema.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := sch.Validate(doc); err != nil {
		return nil, fmt.Errorf("%s does not fit the spec's schema: %v", what, err)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return intent.Canonical(intent.Output{Value: v})
}

func (f specFamily) Canon(raw json.RawMessage) (json.RawMessage, error) {
	return canonValid(f.s.input, raw, "the input")
}

func (f specFamily) CanonAnswer(_, answer json.RawMessage) (json.RawMessage, error) {
	return canonValid(f.s.answer, answer, "the answer")
}

func (f specFamily) Indivisible(raw json.RawMessage) bool {
	if f.s.AtomicBytes > 0 {
		return len(raw) <= f.s.AtomicBytes
	}
	return f.s.builtin != nil && f.s.builtin.Indivisible(raw)
}

func (f specFamily) Structured() bool { return f.s.Structured }

func (f specFamily) Prompts() decompose.Prompts {
	p := f.s.Prompts
	return decompose.Prompts{Atomic: p.Atomic, Decompose: p.Decompose, Discriminate: p.Discriminate, Solve: p.Solve, Compose: p.Compose}
}

// Caps are the spec's, over its Family's where it gives none.
func (f specFamily) Caps(raw json.RawMessage) decompose.Caps {
	var c decompose.Caps
	if b, ok := f.s.builtin.(decompose.CapsFor); ok {
		c = b.Caps(raw)
	}
	if f.s.MaxDepth > 0 {
		c.MaxDepth = f.s.MaxDepth
	}
	if f.s.MaxBreadth > 0 {
		c.MaxBreadth = f.s.MaxBreadth
	}
	return c
}

// checkedSpec is a spec that can check a final answer.
type checkedSpec struct{ specFamily }

// Check checks answer against the spec's Checker, then its Family's.
func (f checkedSpec) Check(input, answer json.RawMessage) (bool, error) {
	if f.s.checker != nil {
		doc, err := schema.Decode([]byte(`{"input":` + string(input) + `,"answer":` + string(answer) + `}`))
		if err != nil {
			return false, err
		}
		if f.s.checker.Validate(doc) != nil {
			return false, nil
		}
	}
	if f.s.builtin != nil {
		return f.s.builtin.Check(input, answer)
	}
	return true, nil
}
