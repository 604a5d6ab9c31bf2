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

// disksFlagOf names the flag of hanoi.New's field (hanoi, calibrate).
var disksFlagOf = map[string]string{"Disks": "disks"}

func newHanoi() *cobra.Command {
	var (
		flags  runFlags
		disks  int
		asJSON bool
		ui     uiFlag
	)
	cmd := &cobra.Command{
		Use:     "hanoi",
		Short:   "Solve Towers of Hanoi, the paper's task, one voted step per move",
		Long:    help("hanoi"),
		Example: example("hanoi"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			task, err := hanoi.New(disks)
			if err != nil {
				return fieldUsageErr(err, disksFlagOf, "--disks")
			}
			if err := flags.validate(cmd); err != nil {
				return err
			}
			return flags.solveTask(cmd, &ui, task, hanoi.Oracle{}, solverWith{steps: hanoi.TotalSteps(disks)}, asJSON, func(t runTotals, _ maker.Report) (any, string, bool, string) {
				sum := hanoiSummary{Solved: t.Error == "" && task.Solved(), WrongSteps: task.WrongSteps(), Disks: disks, runTotals: t}
				wrong := words.Plural(sum.WrongSteps, "wrong step")
				return sum, fmt.Sprintf("hanoi %d disks, k=%s, model %s: solved %v, %s\n", disks, flags.Settings.Margin.String(), flags.Shown(), sum.Solved, wrong), sum.Solved, wrong
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
