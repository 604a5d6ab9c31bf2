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
	cmd := &cobra.Command{
		Use:   "problem --spec FILE --input JSON",
		Short: "Solve a problem of a problem spec (role prompts and schemas) by voted decomposition",
		Long: `problem solves one problem of a problem spec by voted decomposition, the
general MAKER of maker multiply and maker sort for problems of your own: the
spec (a JSON file) gives each role's prompt (atomic, decompose, discriminate,
solve, compose) and the JSON Schemas of a problem's input and of an answer;
a reply whose subproblem or answer breaks them is a red flag. Every decision
is voted first-to-ahead-by-k with the k the plan chooses for --target from
each role's p; proposals are picked by discriminator agents unless the spec
says "structured": true.

The simulated model (the default) plays every role only for a spec that
names a built-in "family" (multiply, sort), from that family's truth: a way
to run a spec's prompts and schemas offline. With a real --model every role
reads the spec's prompts.

solved means the tree finished and its answer passed the spec's "checker"
(and its family's exact check), or, for a spec without either, that the tree
gave an answer (unchecked: "correct" is absent). Exit status 0 solved, 1
failed or wrong, 2 bad usage, spec or input, 130 interrupted. See
docs/decompose.md.`,
		Example: `  maker problem --spec sort-spec.json --input '{"list": [5, 3, 9, 1]}'
  maker problem --spec sum-spec.json --input '{"n": [1, 2, 3, 4]}' --model openai:gpt-4.1-mini --json
  maker problem --spec sum-spec.json --input '{"n": [1, 2, 3]}' --model ollama:tiny --base-url http://127.0.0.1:11434 --timeout 1m --max-tokens 200
  maker problem --spec sort-spec.json --input '{"list": [4, 2, 8, 6]}' --target 0.99 --p 0.95 --seed 3
  maker problem --spec sort-spec.json --input '{"list": [4, 2, 8, 6]}' --p-atomic 0.99 --p-decompose 0.95 --p-discriminate 0.9 --p-solve 0.9 --p-compose 0.95
  maker problem --spec sort-spec.json --input '{"list": [4, 2, 8, 6]}' --k solve=4 --strategy first-to-k --discriminate
  maker problem --spec sort-spec.json --input '{"list": [4, 2, 8, 6]}' --rivals 2 --cofailure 0.05 --flag-rate 0.1 --latency 10ms
  maker problem --spec sort-spec.json --input '{"list": [4, 2, 8, 6]}' --max-depth 4 --max-breadth 2 --parallel 4 --max-samples 100 --max-tokens 300
  maker problem --spec sort-spec.json --input '{"list": [4, 2, 8, 6]}' --journal p.jsonl   # then, after a crash:
  maker problem --spec sort-spec.json --input '{"list": [4, 2, 8, 6]}' --journal p.jsonl --resume
  maker problem --spec sort-spec.json --input '{"list": [4, 2]}' --journal p2.jsonl --journal-unsigned
  maker problem --spec sort-spec.json --input '{"list": [9, 4, 7, 1, 8, 2]}' --journal p3.jsonl --ui 127.0.0.1:0   # its counters live on a web page
  maker problem --spec sum-spec.json --input '{"n": [1, 2]}' --model openai:gpt-4.1-nano --model-atomic openai:gpt-4.1-nano --model-decompose openai:gpt-4.1-mini --model-discriminate openai:gpt-4.1-mini --model-solve openai:gpt-4.1-mini --model-compose openai:gpt-4.1-mini --price all=0.1/0.4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
		},
	}
	cmd.Flags().StringVar(&specFile, "spec", "", "the problem spec FILE (JSON): name, prompts, input and answer schemas (see docs/decompose.md)")
	cmd.Flags().StringVar(&input, "input", "", "the problem, JSON, as the spec's \"input\" schema says")
	f.register(cmd.Flags())
	f.ui.register(cmd)
	_ = cmd.MarkFlagFilename("spec", "json")
	_ = cmd.MarkFlagFilename("journal", "jsonl")
	return cmd
}
