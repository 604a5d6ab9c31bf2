// Package multiply is the long-multiplication problem family for voted
// decomposition (maker/decompose): multiply two decimal numbers of n and m
// digits. A node splits one factor's digits in two and composes the
// partial products by shifted addition; a node of at most three digits
// in all (2×1, 1×2, 1×1) is atomic. It has an exact checker (math/big), a
// seeded generator, and the truth the simulated model plays every role
// from.
package multiply

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/mdap-go/mdap/maker/decompose"
)

// Name is the family's name.
const Name = "multiply"

// MaxDigits bounds a factor's digits.
const MaxDigits = 10000

// ErrInput: an input or answer is not of this family (it says why).
var ErrInput = errors.New("invalid multiplication")

// Input is a problem: the product of A and B, decimal digits.
type Input struct {
	A string `json:"a" jsonschema:"the first factor, decimal digits"`
	B string `json:"b" jsonschema:"the second factor, decimal digits"`
}

// Composition is how partial products compose: the answer is the sum of
// the i-th subproblem's answer times 10^Shifts[i].
type Composition struct {
	Shifts []int `json:"shifts"`
}

// Family is the multiplication family; its zero value is ready. It
// implements decompose.Family, decompose.Checker, decompose.CapsFor and
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

// digits checks a factor and drops its leading zeros.
func digits(what, s string) (string, error) {
	if s == "" || len(s) > MaxDigits {
		return "", fmt.Errorf("%w: %s has %d digits; want 1 to %d", ErrInput, what, len(s), MaxDigits)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return "", fmt.Errorf("%w: %s %q holds %q; want decimal digits only", ErrInput, what, s, c)
		}
	}
	if t := strings.TrimLeft(s, "0"); t != "" {
		return t, nil
	}
	return "0", nil
}

// parse reads a canonical or raw input.
func parse(raw json.RawMessage) (Input, error) {
	var in Input
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.DisallowUnknownFields()
	if err := d.Decode(&in); err != nil {
		return Input{}, fmt.Errorf(`%w: %v; want {"a": "DIGITS", "b": "DIGITS"}`, ErrInput, err)
	}
	var err error
	if in.A, err = digits("a", in.A); err != nil {
		return Input{}, err
	}
	if in.B, err = digits("b", in.B); err != nil {
		return Input{}, err
	}
	return in, nil
}

func (in Input) json() json.RawMessage {
	b, _ := json.Marshal(in) // two strings: cannot fail
	return b
}

// Canon checks an input, {"a": "DIGITS", "b": "DIGITS"}, and returns it
// with leading zeros dropped. Errors wrap ErrInput.
func (Family) Canon(raw json.RawMessage) (json.RawMessage, error) {
	in, err := parse(raw)
	if err != nil {
		return nil, err
	}
	return in.json(), nil
}

// CanonAnswer reads a product: a decimal string (or a JSON integer), and
// returns it as a JSON string without leading zeros. Errors wrap ErrInput.
func (Family) CanonAnswer(_, answer json.RawMessage) (json.RawMessage, error) {
	var s string
	if err := json.Unmarshal(answer, &s); err != nil {
		var n json.Number
		if err := json.Unmarshal(answer, &n); err != nil {
			return nil, fmt.Errorf(`%w: answer %.40s; want a decimal string`, ErrInput, answer)
		}
		s = n.String()
	}
	d, err := digits("the product", s)
	if err != nil {
		return nil, err
	}
	return json.Marshal(d)
}

// Indivisible: both factors have one digit.
func (Family) Indivisible(raw json.RawMessage) bool {
	in, err := parse(raw)
	return err == nil && len(in.A) == 1 && len(in.B) == 1
}

// Structured: proposals are voted on their canonical keys.
func (Family) Structured() bool { return true }

// Prompts are the roles' instructions for real models.
func (Family) Prompts() decompose.Prompts { return prompts }

var prompts = decompose.Prompts{
	Atomic:       `You decide whether a long multiplication is small enough to compute directly. PROBLEM is {"a": A, "b": B}, two decimal numbers as strings. It is small enough when A and B have at most 3 digits together.`,
	Decompose:    `You split a long multiplication {"a": A, "b": B} (decimal strings) into two smaller ones. Split the digits of B (or of A when B has one digit) into a high part and a low part of L digits; the subproblems are A times each part, and the composition is {"shifts": [L, 0]}: the product is the high product times 10^L plus the low product.`,
	Discriminate: `You pick the correct decomposition of a long multiplication among CANDIDATES: the one whose subproblems' products, each times 10 to its shift, add up to A times B.`,
	Solve:        `You multiply two small decimal numbers. PROBLEM is {"a": A, "b": B}; ANSWER is the product A×B as a decimal string.`,
	Compose:      `You add shifted partial products. ANSWERS are the subproblems' products (decimal strings); COMPOSITION is {"shifts": [...]}. ANSWER is the sum of each answer times 10 to its shift, as a decimal string.`,
}

// Check reports whether answer is A×B exactly (math/big).
func (Family) Check(raw, answer json.RawMessage) (bool, error) {
	in, err := parse(raw)
	if err != nil {
		return false, err
	}
	var s string
	if err := json.Unmarshal(answer, &s); err != nil {
		return false, fmt.Errorf("%w: answer %.40s is not a string", ErrInput, answer)
	}
	return s == product(in).String(), nil
}

func product(in Input) *big.Int {
	a, _ := new(big.Int).SetString(in.A, 10)
	b, _ := new(big.Int).SetString(in.B, 10)
	return a.Mul(a, b)
}

// Generate is the seeded problem of an n-digit by an m-digit factor (no
// leading zero): the same (seed, n, m) always gives the same problem.
func Generate(seed uint64, n, m int) json.RawMessage {
	rng := rand.New(rand.NewPCG(seed, uint64(n)<<32|uint64(m)))
	num := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		b[0] = byte('1' + rng.IntN(9))
		return string(b)
	}
	return Input{A: num(max(n, 1)), B: num(max(m, 1))}.json()
}

// Atomic is the truth: at most three digits in all.
func (Family) Atomic(raw json.RawMessage) bool {
	in, err := parse(raw)
	return err == nil && len(in.A)+len(in.B) <= 3
}

// split is the right split: B's digits when B has more than one, else A's.
func split(in Input) (hi, lo Input, low int) {
	if len(in.B) > 1 {
		low = len(in.B) / 2
		return Input{in.A, in.B[:len(in.B)-low]}, Input{in.A, in.B[len(in.B)-low:]}, low
	}
	low = len(in.A) / 2
	return Input{in.A[:len(in.A)-low], in.B}, Input{in.A[len(in.A)-low:], in.B}, low
}

func proposal(hi, lo Input, shifts ...int) decompose.Proposal {
	c, _ := json.Marshal(Composition{Shifts: shifts})
	return decompose.Proposal{Subproblems: []json.RawMessage{hi.json(), lo.json()}, Composition: c}
}

// Split is the right decomposition: {A×high, A×low} shifted by the low
// part's length (or A's, when B has one digit). Errors wrap ErrInput for
// a 1×1 problem.
func (Family) Split(raw json.RawMessage) (decompose.Proposal, error) {
	in, err := parse(raw)
	if err != nil {
		return decompose.Proposal{}, err
	}
	if len(in.A) == 1 && len(in.B) == 1 {
		return decompose.Proposal{}, fmt.Errorf("%w: 1×1 cannot be split", ErrInput)
	}
	hi, lo, low := split(in)
	return proposal(hi, lo, low, 0), nil
}

// WrongSplit is a plausible wrong decomposition: the shift one too many
// (variant 0), one too few, the shifts swapped, or a digit of the high
// part changed (variants 3 and up).
func (f Family) WrongSplit(raw json.RawMessage, variant int) (decompose.Proposal, error) {
	in, err := parse(raw)
	if err != nil {
		return decompose.Proposal{}, err
	}
	if len(in.A) == 1 && len(in.B) == 1 {
		return decompose.Proposal{}, fmt.Errorf("%w: 1×1 cannot be split", ErrInput)
	}
	hi, lo, low := split(in)
	switch variant % 4 {
	case 0:
		return proposal(hi, lo, low+1, 0), nil
	case 1:
		return proposal(hi, lo, low+2, 1), nil
	case 2:
		return proposal(hi, lo, 0, low), nil
	}
	b := []byte(hi.A)
	i := (variant / 4) % len(b)
	b[i] = '0' + (b[i]-'0'+1+byte(variant/4%8))%10
	if b[0] == '0' && len(b) > 1 {
		b[0] = '1'
	}
	if string(b) == hi.A { // the change undone by the leading digit's fix
		b = append(b, '1')
	}
	hi.A, _ = digits("a", string(b))
	return proposal(hi, lo, low, 0), nil
}

// Solve is the right answer, A×B.
func (Family) Solve(raw json.RawMessage) (json.RawMessage, error) {
	in, err := parse(raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(product(in).String())
}

// Compose is the right composition of answers: Σ answers[i]×10^shift[i].
// Errors wrap ErrInput for a composition or answer that is not one.
func (Family) Compose(_, composition json.RawMessage, answers []json.RawMessage) (json.RawMessage, error) {
	var c Composition
	if err := json.Unmarshal(composition, &c); err != nil || len(c.Shifts) != len(answers) {
		return nil, fmt.Errorf("%w: composition %s for %d answers", ErrInput, composition, len(answers))
	}
	sum := new(big.Int)
	for i, a := range answers {
		var s string
		if err := json.Unmarshal(a, &s); err != nil {
			return nil, fmt.Errorf("%w: answer %d: %v", ErrInput, i, err)
		}
		v, ok := new(big.Int).SetString(s, 10)
		if !ok || c.Shifts[i] < 0 || c.Shifts[i] > 2*MaxDigits {
			return nil, fmt.Errorf("%w: answer %d %q shift %d", ErrInput, i, s, c.Shifts[i])
		}
		sum.Add(sum, v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.Shifts[i])), nil)))
	}
	return json.Marshal(sum.String())
}

// WrongAnswer is right plus (variant+1)×10^(variant mod its digits): a
// carry error in some place.
func (Family) WrongAnswer(_, right json.RawMessage, variant int) (json.RawMessage, error) {
	var s string
	if err := json.Unmarshal(right, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrInput, s)
	}
	place := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(variant%len(s))), nil)
	v.Add(v, place.Mul(place, big.NewInt(int64(variant/len(s)+1))))
	return json.Marshal(v.String())
}

// Caps are the right tree's depth plus one (room for a wrong split) and
// breadth 2.
func (f Family) Caps(raw json.RawMessage) decompose.Caps {
	in, err := parse(raw)
	if err != nil {
		return decompose.Caps{MaxDepth: 1, MaxBreadth: 2}
	}
	return decompose.Caps{MaxDepth: depth(in) + 1, MaxBreadth: 2}
}

// depth is the right tree's depth below in.
func depth(in Input) int {
	if len(in.A)+len(in.B) <= 3 {
		return 0
	}
	hi, lo, _ := split(in)
	return 1 + max(depth(hi), depth(lo))
}
