package main

import (
	"fmt"
	"slices"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// registerSolveRoleModels adds maker solve's --model-ROLE flags: each
// role of the multiply, sort and problem lines may play a real model of
// its own, over --model, as maker multiply's --model-ROLE. They are
// checked before anything runs (the command's PreRunE).
func registerSolveRoleModels(cmd *cobra.Command) {
	fs := cmd.Flags()
	for _, r := range decompose.Roles {
		fs.StringArray("model-"+string(r), nil, fmt.Sprintf("the %s role's model in multiply, sort and problem lines, over --model (a spec as --model's, its =IN/OUT its price); several make an ensemble (one over --nats); a real model, with a real --model", r))
	}
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if pre != nil {
			if err := pre(cmd, args); err != nil {
				return err
			}
		}
		return checkSolveRoleModels(cmd.Flags())
	}
}

// solveRoleSpecs are the --model-ROLE flags given.
func solveRoleSpecs(fs *pflag.FlagSet) map[decompose.Role][]string {
	out := map[decompose.Role][]string{}
	for _, r := range decompose.Roles {
		if specs, _ := fs.GetStringArray("model-" + string(r)); len(specs) > 0 {
			out[r] = specs
		}
	}
	return out
}

// checkSolveRoleModels refuses --model-ROLE flags that cannot run
// (problems.RoleModels.Validate: a spec that is not one, the simulated
// model beside a real one), and an ensemble over --nats (a role draws
// from one route).
func checkSolveRoleModels(fs *pflag.FlagSet) error {
	specs := solveRoleSpecs(fs)
	if len(specs) == 0 {
		return nil
	}
	base, _ := fs.GetStringArray("model")
	if err := (problems.RoleModels{Models: base, Roles: specs}).Validate(); err != nil {
		return roleModelsUsageErr(err)
	}
	if slices.Contains(base, "sim") { // a line on --model sim plays the simulated model in every role
		return usageErr("--model-ROLE gives roles real models: give --model a real model too (the simulated model plays every role or none)")
	}
	if nats, _ := fs.GetString("nats"); nats != "" {
		for _, r := range decompose.Roles {
			if len(specs[r]) > 1 {
				return usageErr("--model-%s given %d times: over --nats a role draws from one model's workers", r, len(specs[r]))
			}
		}
	}
	return nil
}

// roleModelsFlagOf names the flag of each field of problems.RoleModels.
var roleModelsFlagOf = func() map[string]string {
	m := map[string]string{"Models": "model"}
	for _, r := range decompose.Roles {
		m["Roles["+string(r)+"]"] = "model-" + string(r)
	}
	return m
}()

// roleModelsUsageErr turns an error of problems.RoleModels into a usage
// error naming the --model and --model-ROLE flags.
func roleModelsUsageErr(err error) error {
	return fieldUsageErr(err, roleModelsFlagOf, "--model")
}

// solveRoleModels puts the --model-ROLE models in ms, a line's role
// models: opened for the line (models.OpenAll, with --base-url and
// --timeout), or over --nats the engine's remote model of the role's
// route, priced as its spec says.
func solveRoleModels(run *runFlags, fs *pflag.FlagSet, ms map[decompose.Role]llms.Model) error {
	for r, specs := range solveRoleSpecs(fs) {
		var m llms.Model
		var err error
		if run.natsURL != "" {
			g := *run
			g.models = specs
			m, err = g.pricedNATSModel(run.drawer.Model(specs[0]))
		} else {
			m, err = models.OpenAll(specs, models.Options{BaseURL: run.baseURL, Timeout: run.timeout})
		}
		if err != nil {
			return fmt.Errorf("--model-%s: %w", r, err)
		}
		ms[r] = m
	}
	return nil
}
