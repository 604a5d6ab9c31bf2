package main

import (
	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/spf13/cobra"
)

func newKMin() *cobra.Command {
	var (
		in     mcpserver.KMinInput // the flags set it: the MCP tool's input
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "kmin",
		Short:   "The scaling laws: k_min, p_full, expected samples and cost",
		Long:    help("kmin"),
		Example: example("kmin"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// vote's own checks, first, so that the error names the flags
			// (mcpserver.KMin names its MCP arguments, steps or valid_rate,
			// and reads a zero target or valid rate as "left out").
			k, err := laws.KMin(in.Steps, in.P, in.Target)
			if err != nil {
				return usageErr("--steps, --p or --target: %w", err)
			}
			if _, err := laws.ExpectedCost(in.P, k, in.ValidRate, in.Price); err != nil {
				return usageErr("--valid-rate or --price: %w", err)
			}
			out, err := mcpserver.KMin(in)
			if err != nil { // vote accepted the flags above: a cost past a float64
				return fieldUsageErr(err, map[string]string{"price": "price"}, "kmin")
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			out.WriteText(cmd.OutOrStdout())
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&in.Steps, "steps", 1<<20-1, "number of steps S")
	f.Float64Var(&in.P, "p", 0.9978, "per-step success rate of one valid sample, in (0.5, 1]")
	f.Float64Var(&in.Target, "target", 0.95, "target probability T that the whole task succeeds, in (0, 1)")
	f.Float64Var(&in.ValidRate, "valid-rate", 1, "share of samples that pass the red flags, in (0, 1]")
	f.Float64Var(&in.Price, "price", 0, "price of one sample, for the cost estimate")
	f.BoolVar(&asJSON, "json", false, "print a JSON object")
	return cmd
}
