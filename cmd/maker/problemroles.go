package main

import (
	"fmt"
	"slices"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/all"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// roleFlags are the --model-ROLE flags of maker multiply, sort and
// problem, and of maker solve's decomposition lines: each role may play a
// real model of its own, over --model (problems.RoleModels.Roles).
type roleFlags map[decompose.Role]*[]string

// registerRoleFlags adds the --model-ROLE flags, their help saying where
// (in which lines) and what else holds.
func registerRoleFlags(fs *pflag.FlagSet, where, more string) roleFlags {
	f := roleFlags{}
	for _, r := range decompose.Roles {
		f[r] = fs.StringArray("model-"+string(r), nil, fmt.Sprintf("the %s role's model%s, over --model (a spec as --model's, its =IN/OUT its price); several make an ensemble%s", r, where, more))
	}
	return f
}

// specs are the --model-ROLE flags given.
func (f roleFlags) specs() map[decompose.Role][]string {
	out := map[decompose.Role][]string{}
	for r, specs := range f {
		if len(*specs) > 0 {
			out[r] = *specs
		}
	}
	return out
}

// checkSolve refuses maker solve's --model-ROLE flags that cannot run
// (problems.RoleModels.Validate: a spec that is not one, the simulated
// model beside a real one), and an ensemble over --nats (a role draws
// from one route).
func (f roleFlags) checkSolve(run *runFlags) error {
	specs := f.specs()
	if len(specs) == 0 {
		return nil
	}
	if err := (problems.RoleModels{Models: run.Models, Roles: specs}).Validate(); err != nil {
		return roleModelsUsageErr(err)
	}
	if slices.Contains(run.Models, "sim") { // a line on --model sim plays the simulated model in every role
		return usageErr("--model-ROLE gives roles real models: give --model a real model too (the simulated model plays every role or none)")
	}
	for r, s := range specs {
		if run.nats.URL != "" && len(s) > 1 {
			return usageErr("--model-%s given %d times: over --nats a role draws from one model's workers", r, len(s))
		}
	}
	return nil
}

// withRoleModels adds the flags of problems.RoleModels' fields to flagOf.
func withRoleModels(flagOf map[string]string) map[string]string {
	flagOf["Models"] = "model"
	for _, r := range decompose.Roles {
		flagOf["Roles["+string(r)+"]"] = "model-" + string(r)
	}
	return flagOf
}

// roleModelsUsageErr turns an error of problems.RoleModels into a usage
// error naming the --model and --model-ROLE flags.
func roleModelsUsageErr(err error) error {
	return fieldUsageErr(err, withRoleModels(map[string]string{}), "--model")
}

// solveRoleModels puts the --model-ROLE models in ms, a line's role
// models: opened for the line (all.Open, with --base-url and
// --timeout), or over --nats the engine's remote model of the role's
// route, priced as its spec says.
func (f roleFlags) solveRoleModels(run *runFlags, ms map[decompose.Role]llms.Model) error {
	for r, specs := range f.specs() {
		var m llms.Model
		var err error
		if run.nats.URL != "" {
			m, err = run.drawer.SpecModel(specs[0], specs[0], run.cfg.Price.InputPerMillion, run.cfg.Price.OutputPerMillion)
		} else {
			m, err = all.Open(specs, models.Options{BaseURL: run.Client.BaseURL, Timeout: run.Client.Timeout})
		}
		if err != nil {
			return fmt.Errorf("--model-%s: %w", r, err)
		}
		ms[r] = m
	}
	return nil
}
