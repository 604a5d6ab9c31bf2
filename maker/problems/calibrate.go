package problems

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/tmc/langchaingo/llms"
)

// Bounds of RolesConfig: against typos, not the cost (a calibration's
// calls are Problems × Nodes × 5 roles × Samples at most).
const (
	MaxRolesProblems = 1000
	MaxRolesNodes    = 10000
	MaxRolesSamples  = 1000
)

// rolesConfigName is where RolesConfig's field errors come from.
const rolesConfigName = "problems.RolesConfig"

// RolesConfig is a measurement of each role's p of a family
// (CalibrateRoles): the seeded problems asked, how much of each, and the
// models that answer.
type RolesConfig struct {
	// Family is the family's name (Lookup): multiply, sort or a
	// registered one. Its flag's and Size's help name the built-in
	// families, which the command knows: {families}, {sizes} and
	// {size-defaults} (flagbind.Usage).
	Family string `flag:"roles" usage:"measure each role's p of a voted decomposition instead (atomic, decompose, discriminate, solve, compose): FAMILY {families}, on seeded problems; the lower bounds are what to give maker {families} as --p-ROLE"`
	// Size is the problems' size (Generate's n); 0 means the family's
	// DefaultRolesSize.
	Size int `flag:"roles-size" usage:"with --roles: the problems' size, {sizes} (0: {size-defaults})"`
	// Problems is how many seeded problems are asked (seeds Seed,
	// Seed+1, ...), 1 to MaxRolesProblems.
	Problems int `flag:"roles-problems" usage:"with --roles: how many seeded problems (--seed) are asked"`
	// Nodes is how many nodes of each problem's right tree are asked,
	// breadth first, 1 to MaxRolesNodes.
	Nodes int `flag:"roles-nodes" usage:"with --roles: how many nodes of each problem's right tree are asked, breadth first"`
	// Samples is how many replies each role gives at each node, 1 to
	// MaxRolesSamples.
	Samples int
	// Seed is the first problem's seed.
	Seed uint64
	// Models are the roles' model specs; all "sim" (RoleModels.Sim)
	// plays the simulated model of Sim in every role.
	Models RoleModels
	// Open are the options real models are opened with.
	Open models.Options
	// Sim is the simulated model of every role, when Models.Sim().
	Sim decompose.SimConfig
	// MaxTokens caps each reply (decompose.CalibrateOptions' Solver).
	MaxTokens int
}

// DefaultRolesSize is the size RolesConfig.Size 0 means: the family's
// Size.Roles (6 digits of each factor for multiply, a list of 20 numbers
// for sort); 0 for another name.
func DefaultRolesSize(family string) int {
	b, _ := LookupBuiltin(family)
	return b.Size.Roles
}

// Validate refuses what CalibrateRoles would: an unknown Family (a field
// error wrapping ErrFamily, not ErrConfig), a Size Generate refuses, or
// Problems, Nodes or Samples out of their bounds. Errors are
// *fielderr.Error naming the field, its value and the fix. It opens
// nothing; cost: one problem generated.
func (c RolesConfig) Validate() error {
	if _, err := Lookup(c.Family); err != nil {
		return &fielderr.Error{Err: ErrFamily, Config: rolesConfigName, Fields: []fielderr.Field{{Name: "Family", Value: c.Family}}, Fix: "use " + strings.Join(Names(), " or ")}
	}
	bad := func(name string, v, hi int) error {
		return fielderr.New(rolesConfigName, name, v, fmt.Sprintf("use 1 to %d", hi))
	}
	switch {
	case c.Problems < 1 || c.Problems > MaxRolesProblems:
		return bad("Problems", c.Problems, MaxRolesProblems)
	case c.Nodes < 1 || c.Nodes > MaxRolesNodes:
		return bad("Nodes", c.Nodes, MaxRolesNodes)
	case c.Samples < 1 || c.Samples > MaxRolesSamples:
		return bad("Samples", c.Samples, MaxRolesSamples)
	}
	if _, err := Generate(c.Family, c.Seed, c.size()); err != nil {
		return fielderr.Of(rolesConfigName, "Size", c.Size, err)
	}
	return nil
}

// size is Size, or the family's default.
func (c RolesConfig) size() int {
	if c.Size == 0 {
		return DefaultRolesSize(c.Family)
	}
	return c.Size
}

// RolesCalibration is what CalibrateRoles measured: decompose.Calibration
// with the problems it was measured on. Its JSON form is maker calibrate
// --roles --json's.
type RolesCalibration struct {
	Family   string `json:"family"`
	Problems int    `json:"problems"`
	Size     int    `json:"size"`
	// Samples is the replies per role at each node.
	Samples int `json:"-"`
	decompose.Calibration
}

// CalibrateRoles validates c, opens its models (the simulated model of
// every role from the family's truth, or c.Models' specs with c.Open) and
// measures each role's p on c.Problems seeded problems
// (decompose.Calibrate).
//
// Cost: up to Problems × Nodes × 5 roles × Samples model calls, one at a
// time. Errors: Validate's; before any call, decompose.NewSim's (field
// errors of the simulated model) or RoleModels.Open's (field errors
// naming "Models" or "Roles[ROLE]"), all wrapping decompose.ErrConfig;
// then decompose.Calibrate's, which do not (ctx.Err() among them).
func CalibrateRoles(ctx context.Context, c RolesConfig) (RolesCalibration, error) {
	out := RolesCalibration{Family: c.Family, Problems: c.Problems, Size: c.size(), Samples: c.Samples}
	if err := c.Validate(); err != nil {
		return out, err
	}
	fam, _ := Lookup(c.Family) // checked by Validate
	inputs := make([]json.RawMessage, c.Problems)
	for i := range inputs {
		inputs[i], _ = Generate(c.Family, c.Seed+uint64(i), out.Size) // the size checked by Validate
	}
	var ms map[decompose.Role]llms.Model
	if c.Models.Sim() {
		sims, err := decompose.NewSim(fam, fam, c.Sim)
		if err != nil {
			return out, err
		}
		ms = sims.Models()
	} else {
		var err error
		if ms, err = c.Models.Open(c.Open); err != nil {
			return out, err
		}
	}
	o := decompose.CalibrateOptions{Samples: c.Samples, MaxNodes: c.Nodes}
	o.Solver.MaxTokens = c.MaxTokens
	var err error
	out.Calibration, err = decompose.Calibrate(ctx, fam, fam, inputs, ms, o)
	return out, err
}

// WriteText writes the roles' table, with model the models' name, and the
// command line that plans with each role's lower bound: "plan with: maker
// FAMILY --p-ROLE P ...", a role with no valid reply left out. Errors: w's.
func (r RolesCalibration) WriteText(w io.Writer, model string) error {
	ew := &errWriter{w: w}
	ew.printf("%s roles on %d seeded problems of size %d (model %s), %d replies per role at each node\n", r.Family, r.Problems, r.Size, model, r.Samples)
	ew.printf("%-13s %6s %6s %7s %9s\n", "role", "valid", "right", "p", "p ≥ (95%)")
	for _, role := range decompose.Roles {
		ew.printf("%-13s %6d %6d %7.3f %9.3f\n", role, r.Valid[role], r.Right[role], r.P[role], r.Lower[role])
	}
	ew.printf("plan with: maker %s", r.Family)
	for _, role := range decompose.Roles {
		if r.Valid[role] > 0 {
			ew.printf(" --p-%s %.3f", role, r.Lower[role])
		}
	}
	ew.printf("\n")
	return ew.err
}

// errWriter keeps the first error of a series of writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
