package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// rolesFlags are maker calibrate's --roles flags: each role of a
// decomposition family measured (decompose.Calibrate) instead of a step
// loop's p.
type rolesFlags struct {
	family   string
	size     int
	problems int
	maxNodes int
}

func (r *rolesFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&r.family, "roles", "", "measure each role's p of a voted decomposition instead (atomic, decompose, discriminate, solve, compose): FAMILY multiply or sort, on seeded problems; the lower bounds are what to give maker multiply or sort as --p-ROLE")
	fs.IntVar(&r.size, "roles-size", 0, "with --roles: the problems' size, digits of each factor (multiply) or the list's length (sort) (0: 6 digits, 20 numbers)")
	fs.IntVar(&r.problems, "roles-problems", 3, "with --roles: how many seeded problems (--seed) are asked")
	fs.IntVar(&r.maxNodes, "roles-nodes", 16, "with --roles: how many nodes of each problem's right tree are asked, breadth first")
}

// rolesCalibration is the --json output of maker calibrate --roles.
type rolesCalibration struct {
	Family   string `json:"family"`
	Problems int    `json:"problems"`
	Size     int    `json:"size"`
	decompose.Calibration
}

// calibrateRoles measures each role's p on the family's seeded problems
// with the --model (the simulated model of every role at --p and
// --wrong-answers by default), --samples replies per role at each node.
func (c *calibrateFlags) calibrateRoles(cmd *cobra.Command) error {
	fs, r := cmd.Flags(), &c.roles
	fam, size, err := c.checkRoles(fs)
	if err != nil {
		return err
	}
	var inputs []json.RawMessage
	for i := range r.problems {
		in, err := problems.Generate(r.family, c.run.seed+uint64(i), size)
		if err != nil {
			return usageErr("--roles-size: %w", err)
		}
		inputs = append(inputs, in)
	}
	ms, err := c.roleModels(fs, fam)
	if err != nil {
		return err
	}
	o := decompose.CalibrateOptions{Samples: c.cfg.Samples, MaxNodes: r.maxNodes}
	o.Solver.MaxTokens = c.run.maxTokens
	cal, err := decompose.Calibrate(cmd.Context(), fam, fam, inputs, ms, o)
	if err != nil {
		if cmd.Context().Err() != nil {
			return interrupted("")
		}
		return failed(err)
	}
	out := cmd.OutOrStdout()
	if c.asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rolesCalibration{Family: r.family, Problems: r.problems, Size: size, Calibration: cal})
		return nil
	}
	c.printRoles(out, size, cal)
	return nil
}

// checkRoles refuses the flags --roles does not take and values out of
// range; it returns the family and the problems' size.
func (c *calibrateFlags) checkRoles(fs *pflag.FlagSet) (problems.Family, int, error) {
	r := &c.roles
	for _, name := range []string{"disks", "spec", "steps-sampled", "until-decided", "until-max-samples", "with-rivals", "k", "root", "tools", "tool-declaration", "max-cost", "samples-per-call", "concurrency", "confidence"} {
		if fs.Lookup(name) != nil && fs.Changed(name) {
			return nil, 0, usageErr("--%s does not apply to --roles: it measures each role at --roles-nodes nodes of --roles-problems problems, --samples replies each", name)
		}
	}
	for _, name := range []string{"roles-size", "roles-problems", "roles-nodes"} {
		if fs.Changed(name) && r.family == "" {
			return nil, 0, usageErr("--%s applies to --roles only", name)
		}
	}
	fam, err := problems.Lookup(r.family)
	if err != nil {
		return nil, 0, usageErr("--roles: %w", err)
	}
	size := r.size
	if size == 0 {
		size = map[string]int{"multiply": 6, "sort": 20}[r.family]
	}
	switch {
	case r.problems < 1 || r.problems > 1000:
		return nil, 0, usageErr("--roles-problems %d: use 1 to 1000", r.problems)
	case r.maxNodes < 1 || r.maxNodes > 10000:
		return nil, 0, usageErr("--roles-nodes %d: use 1 to 10000", r.maxNodes)
	case c.cfg.Samples < 1 || c.cfg.Samples > 1000:
		return nil, 0, usageErr("--samples %d: use 1 to 1000", c.cfg.Samples)
	case !(c.run.p > 0.5 && c.run.p <= 1) && fs.Changed("p"):
		return nil, 0, usageErr("--p %v: use a p above 1/2, at most 1", c.run.p)
	}
	return fam, size, nil
}

// roleModels opens the model of each role: the simulated model of every
// role with --model sim, else every role asks the --model list.
func (c *calibrateFlags) roleModels(fs *pflag.FlagSet, fam problems.Family) (map[decompose.Role]llms.Model, error) {
	if slices.Equal(c.run.models, []string{"sim"}) {
		play := decompose.SimRole{P: c.run.p, Rivals: c.run.wrongAnswers}
		if !fs.Changed("p") {
			play.P = decompose.DefaultP
		}
		sims, err := decompose.NewSim(fam, fam, decompose.SimConfig{Seed: c.run.seed, FlagRate: c.run.flagRate, Roles: problems.SimRoles(play)})
		if err != nil {
			return nil, usageErr("--roles: %w", err)
		}
		return sims.Models(), nil
	}
	ms, err := problems.RoleModels{Models: c.run.models}.Open(models.Options{BaseURL: c.run.baseURL, Timeout: c.run.timeout})
	return ms, roleModelsUsageErr(err)
}

// printRoles prints the roles' table and the command line to plan with.
func (c *calibrateFlags) printRoles(out io.Writer, size int, cal decompose.Calibration) {
	r := &c.roles
	fmt.Fprintf(out, "%s roles on %d seeded problems of size %d (model %s), %d replies per role at each node\n", r.family, r.problems, size, c.run.modelName(), c.cfg.Samples)
	fmt.Fprintf(out, "%-13s %6s %6s %7s %9s\n", "role", "valid", "right", "p", "p ≥ (95%)")
	for _, role := range decompose.Roles {
		fmt.Fprintf(out, "%-13s %6d %6d %7.3f %9.3f\n", role, cal.Valid[role], cal.Right[role], cal.P[role], cal.Lower[role])
	}
	fmt.Fprintf(out, "plan with: maker %s", r.family)
	for _, role := range decompose.Roles {
		if cal.Valid[role] > 0 {
			fmt.Fprintf(out, " --p-%s %.3f", role, cal.Lower[role])
		}
	}
	fmt.Fprintln(out)
}
