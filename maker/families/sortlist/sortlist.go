// Package sortlist is the list-sorting problem family for voted
// decomposition (maker/decompose): sort a list of integers ascending. A
// node splits the list in halves and composes the sorted halves by a
// merge; a list of at most two is atomic. It has an exact checker, a
// seeded generator, and the truth the simulated model plays every role
// from.
package sortlist

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/maker/decompose"
)

// Name is the family's name.
const Name = "sort"

// MaxLen bounds a list's length.
const MaxLen = 1 << 20

// ErrInput: an input or answer is not of this family (it says why).
var ErrInput = errors.New("invalid list")

// Input is a problem: the list to sort.
type Input struct {
	List []int64 `json:"list" jsonschema:"the integers to sort"`
}

// Composition is how sorted parts compose: Op "merge" (a sorted union)
// or "concat" (one after the other).
type Composition struct {
	Op string `json:"op"`
}

// Family is the sorting family; its zero value is ready. It implements
// decompose.Family, decompose.Checker, decompose.CapsFor and
// decompose.Truth.
type Family struct{}

var (
	_ decompose.Family  = Family{}
	_ decompose.Checker = Family{}
	_ decompose.Truth   = Family{}
	_ decompose.CapsFor = Family{}
)

// Name returns Name.
func (Family) Name() string { return Name }

func readList(raw json.RawMessage, what string) ([]int64, error) {
	var l []int64
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("%w: %s: %v; want a JSON list of integers", ErrInput, what, err)
	}
	if l == nil || len(l) > MaxLen {
		return nil, fmt.Errorf("%w: %s holds %d numbers; want 0 to %d", ErrInput, what, len(l), MaxLen)
	}
	return l, nil
}

func parse(raw json.RawMessage) (Input, error) {
	var in struct {
		List json.RawMessage `json:"list"`
	}
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.DisallowUnknownFields()
	if err := d.Decode(&in); err != nil {
		return Input{}, fmt.Errorf(`%w: %v; want {"list": [INTEGERS]}`, ErrInput, err)
	}
	l, err := readList(in.List, "list")
	return Input{List: l}, err
}

func (in Input) json() json.RawMessage {
	b, _ := json.Marshal(in)
	return b
}

func listJSON(l []int64) json.RawMessage {
	if l == nil {
		l = []int64{}
	}
	b, _ := json.Marshal(l)
	return b
}

// Canon checks an input, {"list": [INTEGERS]}, and returns it canonical.
// Errors wrap ErrInput.
func (Family) Canon(raw json.RawMessage) (json.RawMessage, error) {
	in, err := parse(raw)
	if err != nil {
		return nil, err
	}
	return in.json(), nil
}

// CanonAnswer reads a list of integers. Errors wrap ErrInput.
func (Family) CanonAnswer(_, answer json.RawMessage) (json.RawMessage, error) {
	l, err := readList(answer, "answer")
	if err != nil {
		return nil, err
	}
	return listJSON(l), nil
}

// Indivisible: a list of at most one.
func (Family) Indivisible(raw json.RawMessage) bool {
	in, err := parse(raw)
	return err == nil && len(in.List) <= 1
}

// Structured: proposals are voted on their canonical keys.
func (Family) Structured() bool { return true }

// Prompts are the roles' instructions for real models.
func (Family) Prompts() decompose.Prompts { return prompts }

var prompts = decompose.Prompts{
	Atomic:       `You decide whether a list is short enough to sort directly. PROBLEM is {"list": [...]}, integers. It is short enough when it holds at most 2 numbers.`,
	Decompose:    `You split a list-sorting problem {"list": [...]} into two: the first half of the list and the second half, in their order; the composition is {"op": "merge"}.`,
	Discriminate: `You pick the correct decomposition of a list-sorting problem among CANDIDATES: the one whose subproblems together hold exactly the list's numbers and whose composition merges their sorted lists.`,
	Solve:        `You sort a short list of integers ascending. PROBLEM is {"list": [...]}; ANSWER is the sorted list.`,
	Compose:      `You compose sorted lists. ANSWERS are the subproblems' sorted lists; COMPOSITION {"op": "merge"} means merge them into one sorted list, {"op": "concat"} one after the other. ANSWER is the resulting list.`,
}

// Check reports whether answer is the list sorted ascending.
func (Family) Check(raw, answer json.RawMessage) (bool, error) {
	in, err := parse(raw)
	if err != nil {
		return false, err
	}
	got, err := readList(answer, "answer")
	if err != nil {
		return false, err
	}
	return slices.Equal(got, sorted(in.List)), nil
}

func sorted(l []int64) []int64 {
	s := slices.Clone(l)
	slices.Sort(s)
	return s
}

// Generate is the seeded problem of n integers in [0, 1000): the same
// (seed, n) always gives the same list.
func Generate(seed uint64, n int) json.RawMessage {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	l := make([]int64, n)
	for i := range l {
		l[i] = rng.Int64N(1000)
	}
	return Input{List: l}.json()
}

// Atomic is the truth: at most two numbers.
func (Family) Atomic(raw json.RawMessage) bool {
	in, err := parse(raw)
	return err == nil && len(in.List) <= 2
}

func proposal(op string, parts ...[]int64) decompose.Proposal {
	c, _ := json.Marshal(Composition{Op: op})
	p := decompose.Proposal{Composition: c}
	for _, l := range parts {
		p.Subproblems = append(p.Subproblems, Input{List: l}.json())
	}
	return p
}

func halves(l []int64) ([]int64, []int64) {
	h := (len(l) + 1) / 2
	return slices.Clone(l[:h]), slices.Clone(l[h:])
}

// Split is the right decomposition: the halves, merged. Errors wrap
// ErrInput for a list of fewer than two.
func (Family) Split(raw json.RawMessage) (decompose.Proposal, error) {
	in, err := parse(raw)
	if err != nil {
		return decompose.Proposal{}, err
	}
	if len(in.List) < 2 {
		return decompose.Proposal{}, fmt.Errorf("%w: a list of %d cannot be split", ErrInput, len(in.List))
	}
	a, b := halves(in.List)
	return proposal("merge", a, b), nil
}

// WrongSplit is a plausible wrong decomposition: the halves concatenated
// instead of merged (variant 0), the last number dropped, the first
// number doubled.
func (Family) WrongSplit(raw json.RawMessage, variant int) (decompose.Proposal, error) {
	in, err := parse(raw)
	if err != nil {
		return decompose.Proposal{}, err
	}
	if len(in.List) < 2 {
		return decompose.Proposal{}, fmt.Errorf("%w: a list of %d cannot be split", ErrInput, len(in.List))
	}
	a, b := halves(in.List)
	switch variant % 3 {
	case 0:
		return proposal("concat", a, b), nil
	case 1:
		return proposal("merge", a, b[:len(b)-1]), nil
	}
	return proposal("merge", append([]int64{a[0]}, a...), b), nil
}

// Solve is the right answer: the list sorted.
func (Family) Solve(raw json.RawMessage) (json.RawMessage, error) {
	in, err := parse(raw)
	if err != nil {
		return nil, err
	}
	return listJSON(sorted(in.List)), nil
}

// Compose is the right composition of answers: merged (sorted union) or
// concatenated, as composition says. Errors wrap ErrInput.
func (Family) Compose(_, composition json.RawMessage, answers []json.RawMessage) (json.RawMessage, error) {
	var c Composition
	if err := json.Unmarshal(composition, &c); err != nil || (c.Op != "merge" && c.Op != "concat") {
		return nil, fmt.Errorf("%w: composition %s", ErrInput, composition)
	}
	var all []int64
	for i, a := range answers {
		l, err := readList(a, fmt.Sprint("answer ", i))
		if err != nil {
			return nil, err
		}
		all = append(all, l...)
	}
	if c.Op == "merge" {
		slices.Sort(all)
	}
	return listJSON(all), nil
}

// WrongAnswer is right with two neighbours swapped or, for a list of
// fewer than two, a number changed: variant chooses where.
func (Family) WrongAnswer(_, right json.RawMessage, variant int) (json.RawMessage, error) {
	l, err := readList(right, "answer")
	if err != nil {
		return nil, err
	}
	l = slices.Clone(l)
	switch {
	case len(l) == 0:
		l = []int64{int64(variant)}
	case len(l) == 1 || variant%2 == 1:
		l[variant%len(l)] += int64(variant/len(l)) + 1
	default:
		i := (variant / 2) % (len(l) - 1)
		if l[i] == l[i+1] {
			l[i]++
		} else {
			l[i], l[i+1] = l[i+1], l[i]
		}
	}
	return listJSON(l), nil
}

// Caps are the right tree's depth plus one and breadth 2.
func (Family) Caps(raw json.RawMessage) decompose.Caps {
	in, err := parse(raw)
	if err != nil {
		return decompose.Caps{MaxDepth: 1, MaxBreadth: 2}
	}
	d := 0
	for n := len(in.List); n > 2; n = (n + 1) / 2 {
		d++
	}
	return decompose.Caps{MaxDepth: d + 1, MaxBreadth: 2}
}
