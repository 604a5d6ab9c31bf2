package main

import (
	"github.com/mdap-go/mdap/internal/flagbind"
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
	in = mcpserver.KMinInput{Steps: 1<<20 - 1, P: 0.9978, Target: 0.95, ValidRate: 1}
	flagbind.Bind(f, &in)
	f.BoolVar(&asJSON, "json", false, "print a JSON object")
	return cmd
}
