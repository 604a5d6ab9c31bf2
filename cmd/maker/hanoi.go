package main

import (
	"fmt"

	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/spf13/cobra"
)

// hanoiSummary is the --json output of maker hanoi.
type hanoiSummary struct {
	Solved     bool `json:"solved"`
	WrongSteps int  `json:"wrong_steps"`
	Disks      int  `json:"disks"`
	runTotals
}

func newHanoi() *cobra.Command {
	var (
		flags  runFlags
		disks  int
		asJSON bool
		ui     uiFlag
	)
	cmd := &cobra.Command{
		Use:   "hanoi",
		Short: "Solve Towers of Hanoi, the paper's task, one voted step per move",
		Long: `hanoi solves Towers of Hanoi with N disks in 2^N-1 steps. Each step is one
stateless microagent call that sees the rules, the previous move and the
current state, and answers the next move and state; every step is voted on
first-to-ahead-by-k. By default the model is the built-in simulated model with
the paper's gpt-4.1-mini error rate (p = 0.9978), so the run is offline.

solved means the final state has every disk on peg 2 after exactly 2^N-1 legal
moves; wrong_steps counts steps whose winning move was not the right move.
Exit status 1 when the run fails or is not solved.`,
		Example: `  maker hanoi --disks 10
  maker hanoi --disks 12 --p 0.99 --k 3 --json
  maker hanoi --disks 15 --journal run.jsonl        # then, after a crash:
  maker hanoi --disks 15 --journal run.jsonl --resume
  maker hanoi --disks 3 --model openai:tiny --base-url http://127.0.0.1:11434/v1
  maker hanoi --disks 3 --model ollama:tiny --base-url http://127.0.0.1:11434 --structured --verbose
  maker hanoi --disks 3 --model openai:gpt-4o-mini --model anthropic:claude-3-5-haiku --json
  maker hanoi --disks 3 --model openai:my-model=0.20/0.80 --base-url https://host/v1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if disks < 1 || disks > hanoi.MaxDisks {
				return usageErr("--disks %d: use 1 to %d", disks, hanoi.MaxDisks)
			}
			if err := flags.validate(cmd); err != nil {
				return err
			}
			task, err := hanoi.New(disks)
			if err != nil {
				return usageErr("--disks: %w", err)
			}
			return flags.solveTask(cmd, &ui, task, hanoi.Oracle{}, solverWith{steps: hanoi.TotalSteps(disks)}, func(s *maker.Solver, rep maker.Report, runErrV error) error {
				sum := hanoiSummary{Solved: runErrV == nil && task.Solved(), WrongSteps: task.WrongSteps(), Disks: disks,
					runTotals: flags.totals(cmd.Context(), s, rep, runErrV)}
				report(cmd.OutOrStdout(), asJSON, sum, fmt.Sprintf("hanoi %d disks, k=%s, model %s: solved %v, %s\n",
					disks, flags.kText(), flags.modelName(), sum.Solved, words.Plural(sum.WrongSteps, "wrong step")), rep, sum.runTotals)
				return flags.ending(cmd.Context(), runErrV, sum.Solved, words.Plural(sum.WrongSteps, "wrong step"))
			})
		},
	}
	cmd.Flags().IntVar(&disks, "disks", 10, fmt.Sprintf("number of disks, 1 to %d (2^N-1 steps)", hanoi.MaxDisks))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON summary on stdout")
	flags.register(cmd)
	flags.obs.register(cmd.Flags(), true)
	ui.register(cmd)
	return cmd
}
