package problems

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/mdap-go/mdap/maker/families/sortlist"
)

// builtins are the built-in families, in the order messages, commands and
// the bench suite list them. A new family is one entry here (and its own
// package, and its section of docs/decompose.md): every consumer (maker's
// commands and `maker solve` lines, batch.Builtin, the MCP server's
// solve_problem, the decompose bench suite, calibrate --roles) finds it
// through Builtins and Lookup.
var builtins = []Builtin{
	{
		Family: multiply.Family{}, Input: multiply.Input{},
		Short:   "Multiply two long numbers by voted decomposition, with an exact check",
		About:   "a long multiplication: the product of a and b",
		Example: `{"a": "DIGITS", "b": "DIGITS"}`,
		Flags: []InputFlag{{Name: "a", Usage: "the first factor, decimal digits"},
			{Name: "b", Usage: "the second factor, decimal digits"}},
		Size: Size{Flag: "digits", Default: 5, Roles: 6, Min: 1, Max: multiply.MaxDigits, Unit: "digits",
			Usage:   "without --a and --b: a seeded problem of two N-digit factors (--seed)",
			Meaning: "digits of each factor",
			Generate: func(seed uint64, n int) json.RawMessage {
				return multiply.Generate(seed, n, n)
			}},
		Headline: func(input json.RawMessage) string {
			var in multiply.Input
			_ = json.Unmarshal(input, &in)
			return fmt.Sprintf("multiply %s×%s", abbreviate(in.A), abbreviate(in.B))
		},
		Bench: BenchCells{Sizes: []int{5, 6, 10}, QuickSizes: []int{5, 6, 10}, N: 200, QuickN: 3,
			Label: func(n int) string { return fmt.Sprintf("multiply %d×%d", n, n) }},
	},
	{
		Family: sortlist.Family{}, Input: sortlist.Input{},
		Short:   "Sort a list of integers by voted decomposition, with an exact check",
		About:   "a list of integers to sort ascending",
		Example: `{"list": [INTEGERS]}`,
		Flags:   []InputFlag{{Name: "list", Usage: "the list to sort, JSON: '[3, 1, 2]'", JSON: "a JSON list of integers such as '[3, 1, 2]'"}},
		Size: Size{Flag: "length", Default: 20, Roles: 20, Min: 0, Max: sortlist.MaxLen, Unit: "numbers",
			Usage:   "without --list: a seeded list of N integers in [0, 1000) (--seed)",
			Meaning: "the list's length", Noun: "a list of",
			Generate: sortlist.Generate},
		Headline: func(input json.RawMessage) string {
			var in struct{ List []json.RawMessage }
			_ = json.Unmarshal(input, &in)
			return fmt.Sprintf("sort a list of %d", len(in.List))
		},
		Bench: BenchCells{Sizes: []int{500}, QuickSizes: []int{40}, N: 50, QuickN: 2,
			Label: func(n int) string { return fmt.Sprintf("sort %d", n) }},
	},
}

// Builtin is a built-in family as every consumer of it needs it: the
// family, and what its command, its task lines, its MCP input and its
// bench cells are made of.
type Builtin struct {
	// Family is the family: its name (Family.Name()) is its command, the
	// key of its task lines and of solve_problem's input.
	Family Family
	// Input is a value of the problem's Go type (its fields' json and
	// jsonschema tags make the MCP input's schema).
	Input any
	// Short is its command's one-line help; About says what a problem
	// is, in the MCP input's schema.
	Short, About string
	// Example is a problem's JSON as messages show it:
	// {"a": "DIGITS", "b": "DIGITS"}.
	Example string
	// Flags are the problem's fields, each a flag of its command; all or
	// none are given (none: a seeded problem of Size).
	Flags []InputFlag
	// Size is the seeded generator.
	Size Size
	// Headline names a problem in its command's summary.
	Headline func(input json.RawMessage) string
	// Bench are its cells of the decompose bench suite (none: no cell).
	Bench BenchCells
	// Long and Examples are its command's help when cmd/maker has no
	// help file of the name ("" for a family that has one).
	Long, Examples string
}

// InputFlag is one field of a problem given as a flag of its command.
type InputFlag struct {
	// Name is the flag and the field of the problem's JSON.
	Name, Usage string
	// JSON, if set, says the flag's value is JSON (else a string) and
	// what JSON a user should give: "a JSON list of integers such as
	// '[3, 1, 2]'".
	JSON string
}

// FlagInput is the problem a family's command is given: its input flags'
// values (given holds those set on the command line, by Name), all of
// them or none; with none, the seeded problem of size n (Generate), which
// sizeGiven says was set too. A JSON flag's value must be JSON; a string
// flag's is quoted. Every error is bad input, said in flags ("give both
// --a and --b (or --digits N)"); an n out of range wraps
// decompose.ErrInput. Cost: O(len(Flags)) and the generator's.
func (b Builtin) FlagInput(given map[string]string, sizeGiven bool, seed uint64, n int) (json.RawMessage, error) {
	names := make([]string, len(b.Flags))
	for i, in := range b.Flags {
		names[i] = "--" + in.Name
	}
	all := strings.Join(names, " and ")
	switch {
	case len(given) == 0:
		in, err := Generate(b.Name(), seed, n)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", b.Size.Flag, err)
		}
		return in, nil
	case sizeGiven:
		return nil, fmt.Errorf("give %s, or --%s, not both", all, b.Size.Flag)
	case len(given) < len(b.Flags):
		return nil, fmt.Errorf("give both %s (or --%s N)", all, b.Size.Flag)
	}
	fields := map[string]json.RawMessage{}
	for _, in := range b.Flags {
		v := given[in.Name]
		if fields[in.Name], _ = json.Marshal(v); in.JSON != "" {
			if fields[in.Name] = json.RawMessage(v); !json.Valid(fields[in.Name]) {
				return nil, fmt.Errorf("--%s %q is not JSON: give %s", in.Name, v, in.JSON)
			}
		}
	}
	return json.Marshal(fields)
}

// Size is a family's seeded generator and the bounds of its size.
type Size struct {
	// Flag is the size's flag ("digits"), Usage its help, Default its
	// default; Roles is calibrate --roles' default size.
	Flag, Usage   string
	Default       int
	Roles         int
	Min, Max      int
	Unit, Meaning string // "digits", "digits of each factor"
	// Noun, if set, comes before the size in the out-of-range error ("a
	// list of"); else the size is followed by Unit.
	Noun string
	// Generate is the problem of size n (in Min..Max) from seed: the
	// same (seed, n), the same problem.
	Generate func(seed uint64, n int) json.RawMessage
}

// BenchCells are a family's cells of the decompose bench suite: each size
// with N problems (QuickSizes and QuickN under --quick); Label names a
// cell's size in the report ("multiply 10×10").
type BenchCells struct {
	Sizes, QuickSizes []int
	N, QuickN         int
	Label             func(n int) string
}

// Name is the family's name.
func (b Builtin) Name() string { return b.Family.Name() }

var mu sync.RWMutex

// familyName is the form of a family's name: a task line's key, an MCP
// property and a command.
var familyName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Reserved are the names no family may take: the other keys of a task
// line (maker/batch's Job) and of the MCP solve_problem tool's input,
// beside which a family's problem is read.
var Reserved = []string{
	"id", "spec", "input", "hanoi", "problem", "task", "family", "family_input", "k", "root", "tools", "seed", "max_steps", "max_samples", "max_errors",
	"target", "p", "strategy", "journal", "resume", "models", "role_models", "base_url",
}

// Builtins lists the built-in families, in order. Cost: a copy of the
// list.
func Builtins() []Builtin {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(builtins)
}

// Register adds a family to Builtins, after the others: for a library
// user's own family, or a test's. It must run before the consumers are
// built (the commands, an MCP server, a batch's lines are read), as with
// database/sql's Register. It returns a function that removes it again.
// It panics on a name that is not lowercase letters, digits, '-' and
// '_' starting with a letter, a name taken by another family or by a
// field a family's problem is read beside (Reserved: a task line's or the
// MCP solve_problem tool's), a Family, Input, Size.Generate or Headline
// missing, or Bench sizes without a Label: programming errors. A name is
// also a command of maker: one that a command has already (run, solve) is
// the caller's to avoid.
func Register(b Builtin) (unregister func()) {
	if b.Family == nil || b.Name() == "" || b.Input == nil || b.Size.Generate == nil || b.Headline == nil {
		panic("problems: Register: a Builtin needs a named Family, an Input, Size.Generate and Headline")
	}
	if !familyName.MatchString(b.Name()) || slices.Contains(Reserved, b.Name()) {
		panic("problems: Register: family name " + strconv.Quote(b.Name()) + " is not lowercase letters, digits, '-' and '_', or it is a field a problem is read beside (problems.Reserved)")
	}
	if len(b.Bench.Sizes)+len(b.Bench.QuickSizes) > 0 && b.Bench.Label == nil {
		panic("problems: Register: Bench cells need a Label")
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(builtins, func(o Builtin) bool { return o.Name() == b.Name() }) {
		panic("problems: Register: family " + b.Name() + " is registered twice")
	}
	builtins = append(builtins, b)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		builtins = slices.DeleteFunc(builtins, func(o Builtin) bool { return o.Name() == b.Name() })
	}
}

// Names lists the families' names, in order.
func Names() []string {
	var out []string
	for _, b := range Builtins() {
		out = append(out, b.Name())
	}
	return out
}

// LookupBuiltin returns the registration of family name. Errors wrap
// ErrFamily and list the names.
func LookupBuiltin(name string) (Builtin, error) {
	for _, b := range Builtins() {
		if b.Name() == name {
			return b, nil
		}
	}
	return Builtin{}, fmt.Errorf("%w %q: use %s", ErrFamily, name, strings.Join(Names(), " or "))
}

// Lookup returns the family of name. Errors wrap ErrFamily.
func Lookup(name string) (Family, error) {
	b, err := LookupBuiltin(name)
	return b.Family, err
}

// SimModels is the simulated model of every role of family name's
// voted decompositions, playing from the family's own truth with cfg
// (decompose.NewSim): what a worker serves for a coordinator's family
// lines (maker worker --roles), its route its OneModel's identity. Errors
// wrap ErrFamily, or are decompose.NewSim's.
func SimModels(name string, cfg decompose.SimConfig) (*decompose.SimModels, error) {
	fam, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return decompose.NewSim(fam, fam, cfg)
}

// Generate is the seeded problem of size n of family name (Size.Generate).
// The same (name, seed, n) always gives the same problem. Errors wrap
// ErrFamily, or decompose.ErrInput for an n out of the family's Size.Min
// to Size.Max.
func Generate(name string, seed uint64, n int) (json.RawMessage, error) {
	b, err := LookupBuiltin(name)
	if err != nil {
		return nil, err
	}
	if s := b.Size; n < s.Min || n > s.Max {
		if s.Noun != "" { // "a list of 5: use 0 to 9 numbers"
			return nil, fmt.Errorf("%w: %s %d: use %d to %d %s", decompose.ErrInput, s.Noun, n, s.Min, s.Max, s.Unit)
		}
		return nil, fmt.Errorf("%w: %d %s: use %d to %d", decompose.ErrInput, n, s.Unit, s.Min, s.Max)
	}
	return b.Size.Generate(seed, n), nil
}

// abbreviate shortens a long factor for a headline.
func abbreviate(s string) string {
	if len(s) <= 24 {
		return s
	}
	return s[:10] + "…" + s[len(s)-10:] + fmt.Sprintf(" (%d digits)", len(s))
}
