package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/spf13/cobra"
)

func newProblem() *cobra.Command {
	var (
		f        decompFlags
		specFile string
		input    string
	)
	cmd := decompCommand("problem --spec FILE --input JSON", "Solve a problem of a problem spec (role prompts and schemas) by voted decomposition", help("problem"), example("problem"), &f, func(cmd *cobra.Command) error {
		if specFile == "" || !cmd.Flags().Changed("input") {
			return usageErr("give --spec FILE (a problem spec) and --input JSON (a problem of it)")
		}
		s, err := problems.LoadSpec(specFile)
		if err != nil {
			return usageErr("--spec: %w", err)
		}
		in := json.RawMessage(input)
		if !json.Valid(in) {
			return usageErr("--input %q is not JSON: give the problem as the spec's \"input\" schema says", input)
		}
		return f.solveWith(cmd, s.Name, fmt.Sprintf("problem %s", s.Name), true, func(ctx context.Context, o problems.Options) (*decompose.Result, error) {
			return problems.SolveSpec(ctx, s, in, o)
		})
	})
	cmd.Flags().StringVar(&specFile, "spec", "", "the problem spec FILE (JSON): name, prompts, input and answer schemas (see docs/decompose.md)")
	cmd.Flags().StringVar(&input, "input", "", "the problem, JSON, as the spec's \"input\" schema says")
	_ = cmd.MarkFlagFilename("spec", "json")
	return cmd
}
