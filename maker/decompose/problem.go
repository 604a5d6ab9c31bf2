package decompose

import (
	"encoding/json"
	"errors"

	"github.com/tmc/langchaingo/llms"
)

// Errors of the package, for errors.Is.
var (
	// ErrInput: a problem's input is not one of its family's (the
	// family's Canon refused it).
	ErrInput = errors.New("invalid problem input")
	// ErrDecision: a decision could not be made (its vote failed: no
	// winner within the sample budget, too many failed calls); it wraps
	// the vote's error.
	ErrDecision = errors.New("decision failed")
	// ErrNoModel: a role that the run needs has no model.
	ErrNoModel = errors.New("role has no model")
)

// Role is one kind of agent of a decomposition.
type Role string

// The roles. Every role has its own model, p and k.
const (
	// RoleAtomic decides whether a node is solved directly (yes/no).
	RoleAtomic Role = "atomic"
	// RoleDecompose proposes subproblems and a composition.
	RoleDecompose Role = "decompose"
	// RoleDiscriminate picks one proposal among candidates.
	RoleDiscriminate Role = "discriminate"
	// RoleSolve answers an atomic problem.
	RoleSolve Role = "solve"
	// RoleCompose computes a node's answer from its subproblems' answers.
	RoleCompose Role = "compose"
)

// Roles lists every role, in the order reports use.
var Roles = []Role{RoleAtomic, RoleDecompose, RoleDiscriminate, RoleSolve, RoleCompose}

// Proposal is a decomposition: the subproblems' inputs (canonical JSON of
// the same family) and how their answers compose into the parent's
// answer (family-defined JSON, read by the composer agents).
type Proposal struct {
	Subproblems []json.RawMessage `json:"subproblems"`
	Composition json.RawMessage   `json:"composition"`
}

// Family is a kind of problem: what the engine needs to decompose and
// solve it with any models. Its methods must be safe for concurrent use
// and deterministic.
type Family interface {
	// Name names the family ("multiply", "sort").
	Name() string
	// Canon checks an input and returns its canonical JSON; an error
	// (wrapped in ErrInput by the engine) says what is wrong with it.
	Canon(input json.RawMessage) (json.RawMessage, error)
	// CanonAnswer checks an answer to input and returns its canonical
	// JSON; an error makes the reply a red flag (it does not vote).
	CanonAnswer(input, answer json.RawMessage) (json.RawMessage, error)
	// Indivisible reports an input that cannot be split: it is atomic
	// without an atomicity vote.
	Indivisible(input json.RawMessage) bool
	// Structured reports that proposals are voted on their canonical
	// keys; false makes discriminator agents pick among them.
	Structured() bool
	// Prompts are the role prompts for real models.
	Prompts() Prompts
}

// Checker is a Family that can check a final answer exactly.
type Checker interface {
	// Check reports whether answer solves input.
	Check(input, answer json.RawMessage) (bool, error)
}

// Truth is what the simulated model knows of a family: the right
// decision of every role, and plausible wrong ones. A family implements it
// to be played by [SimModels] and to have decisions counted right or
// wrong in a [Result]. Methods must be deterministic and safe for
// concurrent use.
type Truth interface {
	// Atomic is the right atomicity of input.
	Atomic(input json.RawMessage) bool
	// Split is the right decomposition of a divisible input.
	Split(input json.RawMessage) (Proposal, error)
	// WrongSplit is the variant-th wrong decomposition (variants
	// distinct as far as the family has distinct wrong ones).
	WrongSplit(input json.RawMessage, variant int) (Proposal, error)
	// Solve is the right answer to input.
	Solve(input json.RawMessage) (json.RawMessage, error)
	// Compose is the right composition of the given answers (right or
	// not) by composition for input.
	Compose(input, composition json.RawMessage, answers []json.RawMessage) (json.RawMessage, error)
	// WrongAnswer is the variant-th wrong answer to input, other than
	// right.
	WrongAnswer(input, right json.RawMessage, variant int) (json.RawMessage, error)
}

// AllRoles is m for every role: the usual Config.Models for one real
// model.
func AllRoles(m llms.Model) map[Role]llms.Model { return EveryRole(m) }

// EveryRole is v for every role of Roles, in a new map the caller may
// change: one model (AllRoles), one simulated play, one p for a plan's
// Settings.P. Cost: one entry per role.
func EveryRole[T any](v T) map[Role]T {
	out := make(map[Role]T, len(Roles))
	for _, r := range Roles {
		out[r] = v
	}
	return out
}
