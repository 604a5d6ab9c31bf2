package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// registerRoles binds maker calibrate's --roles flags to c.roles: each
// role of a decomposition family measured (problems.CalibrateRoles)
// instead of a step loop's p. The help of --roles and --roles-size names
// the built-in families.
func (c *calibrateFlags) registerRoles(fs *pflag.FlagSet) {
	var meanings, defaults []string
	for _, b := range problems.Builtins() {
		meanings = append(meanings, fmt.Sprintf("%s (%s)", b.Size.Meaning, b.Name()))
		defaults = append(defaults, fmt.Sprintf("%d %s", b.Size.Roles, b.Size.Unit))
	}
	c.roles = problems.RolesConfig{Problems: 3, Nodes: 16}
	flagbind.Usage{"families": strings.Join(problems.Names(), " or "), "sizes": strings.Join(meanings, " or "),
		"size-defaults": strings.Join(defaults, ", ")}.Bind(fs, &c.roles)
}

// forRoles are the calibrate flags --roles reads; it refuses any other
// given (the step loop's, calibrate's own), so none is taken and ignored.
var forRoles = map[string]bool{"roles": true, "roles-size": true, "roles-problems": true, "roles-nodes": true, "samples": true, "seed": true,
	"model": true, "models": true, "base-url": true, "timeout": true, "p": true, "wrong-answers": true, "flag-rate": true, "max-tokens": true, "json": true}

// rolesFlagOf names the flag of each problems.RolesConfig field.
var rolesFlagOf = flagbind.Names(map[string]string{"Samples": "samples"}, problems.RolesConfig{})

// calibrateRoles measures each role's p on the family's seeded problems
// with the --model (the simulated model of every role at --p and
// --wrong-answers by default), --samples replies per role at each node.
func (c *calibrateFlags) calibrateRoles(cmd *cobra.Command) error {
	fs := cmd.Flags()
	var name string
	fs.Visit(func(f *pflag.Flag) {
		if name == "" && !forRoles[f.Name] && cmd.LocalFlags().Lookup(f.Name) != nil {
			name = f.Name
		}
	})
	if name != "" {
		return usageErr("--%s does not apply to --roles: it measures each role at --roles-nodes nodes of --roles-problems problems, --samples replies each", name)
	}
	if name := given(fs, "roles-size", "roles-problems", "roles-nodes"); name != "" && c.roles.Family == "" {
		return usageErr("--%s applies to --roles only", name)
	}
	play := decompose.SimRole{P: decompose.DefaultP, Rivals: c.run.Sim.WrongAnswers}
	if fs.Changed("p") {
		if !(c.run.Sim.P > 0.5 && c.run.Sim.P <= 1) {
			return usageErr("--p %v: use a p above 1/2, at most 1", c.run.Sim.P)
		}
		play.P = c.run.Sim.P
	}
	cfg := c.roles
	cfg.Samples, cfg.Seed, cfg.MaxTokens = c.cfg.Samples, c.run.Sim.Seed, c.run.cfg.MaxTokens
	cfg.Models, cfg.Open = problems.RoleModels{Models: c.run.Models}, c.run.Client
	cfg.Sim = decompose.SimConfig{Seed: c.run.Sim.Seed, FlagRate: c.run.Sim.FlagRate, Roles: problems.SimRoles(play)}
	if err := fieldUsageErr(cfg.Validate(), rolesFlagOf, "--roles"); err != nil {
		return err
	}
	cal, err := problems.CalibrateRoles(cmd.Context(), cfg)
	switch {
	case err != nil && cmd.Context().Err() != nil:
		return interrupted("")
	case errors.Is(err, decompose.ErrConfig) && cfg.Models.Sim(): // decompose.NewSim's
		return usageErr("--roles: %w", err)
	case errors.Is(err, decompose.ErrConfig): // problems.RoleModels.Open's
		return roleModelsUsageErr(err)
	case err != nil:
		return failed(err)
	}
	if c.JSON {
		return writeJSON(cmd.OutOrStdout(), cal)
	}
	return cal.WriteText(cmd.OutOrStdout(), c.run.Shown())
}
