// Package problems runs the decomposition families by name
// ("multiply": maker/families/multiply, "sort": maker/families/sortlist, registered in
// families.go: Builtins, Register, Lookup) with one call:
// Solve takes a family's name, a problem and Options and returns the
// decompose.Result, on the simulated model of every role by default or on
// the models given. It is what `maker multiply`, `maker sort`, the
// "multiply" and "sort" lines of `maker solve`, the MCP server and the
// decompose bench suite share, so that each of them only maps its own
// input to Options.
package problems

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/tmc/langchaingo/llms"
)

// ErrFamily: the name is not a family's; the message lists the names.
var ErrFamily = errors.New("unknown problem family")

// Family is what a family of this package is: a decompose.Family with an
// exact checker and the truth the simulated model plays from.
type Family interface {
	decompose.Family
	decompose.Checker
	decompose.Truth
}

// Options are a run of Solve: the decomposition's settings and what plays
// the roles.
type Options struct {
	// Settings are decompose.Settings: strategy, T, each role's p for the
	// plan, fixed k, caps, parallelism, the solver's race settings.
	Settings decompose.Settings
	// Models, if set, plays the roles (decompose.AllRoles(m) for one
	// model); nil plays every role with the simulated model of Sim.
	Models map[decompose.Role]llms.Model
	// Sim is the simulated model of every role (seed, each role's p,
	// rivals and co-failure share, red flags, latency), when Models is nil.
	Sim decompose.SimConfig
	// Journal, JournalUnsigned and JournalKey are decompose.Config's: a
	// journal file created when absent and resumed when present.
	Journal         string
	JournalUnsigned bool
	JournalKey      []byte
	// JournalStore, if set instead of Journal, keeps the decision journal
	// (decompose.Config.JournalStore: a task's journal on the NATS
	// engine); Solve closes it.
	JournalStore journal.Store
	// Logger receives the decisions' debug logs; nil means none.
	Logger *slog.Logger
	// Wrap, if set, wraps every role's model (a batch's shared provider
	// limits, say): the simulated ones too.
	Wrap func(llms.Model) llms.Model
}

// Solve solves input of family name by voted decomposition
// (decompose.Solve) with o's models, or the simulated model of every role
// when o.Models is nil, and returns its Result: the answer (canonical
// JSON: the product as a decimal string, the sorted list), whether the
// family's exact checker finds it correct, the samples and cost in all and
// per role, the decisions the family's truth finds wrong, and, on the
// simulated model, the co-failed decisions the votes could not protect.
//
// Guarantee and cost: decompose.Solve's. Errors: ErrFamily; the errors of
// decompose.NewSim (decompose.ErrConfig naming the role's field) and of
// decompose.Solve (decompose.ErrInput for a problem that is not one,
// ErrConfig, ErrPlan, ErrDecision, the journal's, ctx.Err()). On an error
// after the run began, the Result holds what was decided.
func Solve(ctx context.Context, name string, input json.RawMessage, o Options) (*decompose.Result, error) {
	fam, err := Lookup(name)
	if err != nil {
		o.closeStore()
		return nil, err
	}
	return solve(ctx, fam, fam, input, o)
}

// SolveSpec solves input of the problem spec s by voted decomposition,
// as Solve does a built-in family's: with o's models (the role prompts
// are the spec's), or the simulated model of every role playing from the
// truth of the spec's Family when o.Models is nil. The answer is checked
// by the spec's Checker and Family when it has them (Result.Correct),
// else not (Correct nil). Guarantee and cost: decompose.Solve's.
// Errors: ErrNoTruth for the simulated model without a Family; those of
// Solve.
func SolveSpec(ctx context.Context, s *Spec, input json.RawMessage, o Options) (*decompose.Result, error) {
	var truth decompose.Truth
	if s.builtin != nil {
		truth = s.builtin
	} else if o.Models == nil {
		o.closeStore()
		return nil, fmt.Errorf("%w: problem spec %q names no \"family\"", ErrNoTruth, s.Name)
	}
	return solve(ctx, s.AsFamily(), truth, input, o)
}

// ErrNoTruth: the simulated model was asked to play a problem spec that
// names no built-in family whose truth it could play from; give real
// models, or a "family".
var ErrNoTruth = errors.New("the simulated model needs a family's truth")

func solve(ctx context.Context, fam decompose.Family, truth decompose.Truth, input json.RawMessage, o Options) (*decompose.Result, error) {
	cfg := decompose.Config{Settings: o.Settings, Models: o.Models, Truth: truth,
		Journal: o.Journal, JournalStore: o.JournalStore, JournalUnsigned: o.JournalUnsigned, JournalKey: o.JournalKey, Logger: o.Logger}
	if cfg.Models == nil {
		sims, err := decompose.NewSim(fam, truth, o.Sim)
		if err != nil {
			o.closeStore()
			return nil, err
		}
		cfg.Models, cfg.CoFailures = sims.Models(), sims
	}
	if o.Wrap != nil {
		wrapped := make(map[decompose.Role]llms.Model, len(cfg.Models))
		for r, m := range cfg.Models {
			wrapped[r] = o.Wrap(m)
		}
		cfg.Models = wrapped
	}
	return decompose.Solve(ctx, fam, input, cfg)
}

// closeStore closes o.JournalStore when a run ends before
// decompose.Solve, which would have closed it.
func (o Options) closeStore() {
	if o.JournalStore != nil {
		o.JournalStore.Close()
	}
}

// SimRoles is every role played as play: a SimConfig.Roles with one entry
// per role, over which a caller may set single roles.
func SimRoles(play decompose.SimRole) map[decompose.Role]decompose.SimRole {
	return decompose.EveryRole(play)
}

// ParseRole reads a role's name ("atomic", "decompose", "discriminate",
// "solve", "compose"). Errors wrap decompose.ErrConfig and list the roles.
func ParseRole(s string) (decompose.Role, error) {
	for _, r := range decompose.Roles {
		if string(r) == s {
			return r, nil
		}
	}
	names := make([]string, len(decompose.Roles))
	for i, r := range decompose.Roles {
		names[i] = string(r)
	}
	return "", fmt.Errorf("%w: role %q: use one of %s", decompose.ErrConfig, s, strings.Join(names, ", "))
}
