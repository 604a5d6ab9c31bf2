package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/spf13/cobra"
)

// specSummary is the --json output of maker run.
type specSummary struct {
	Spec      string          `json:"spec"`
	Name      string          `json:"name"`
	Solved    bool            `json:"solved"`
	State     json.RawMessage `json:"state"`
	ToolCalls int             `json:"tool_calls"`
	Denied    int             `json:"denied"`
	Root      string          `json:"root"`
	Tools     string          `json:"tools"`
	runTotals
}

// runCmd is maker run's flags; JSON is its own (flagbind).
type runCmd struct {
	flags runFlags
	tools toolFlags
	ui    uiFlag
	JSON  bool `flag:"json" usage:"print a JSON summary on stdout"`
}

func newRun() *cobra.Command {
	r := &runCmd{}
	cmd := &cobra.Command{
		Use:     "run SPEC.json",
		Short:   "Run one task from a spec file, with its tools under --root and --tools",
		Long:    help("run"),
		Example: example("run"),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "-" && r.flags.modelsFile == "-" {
				return usageErr("the spec and --models both on standard input: give one of them as a file")
			}
			if err := r.flags.validate(cmd); err != nil {
				return err
			}
			if r.flags.nats.URL != "" && slices.Contains(r.flags.Models, "sim") {
				return usageErr("--nats with --model sim: the workers' simulated model answers Towers of Hanoi only (a spec's script does not travel); run a spec over --nats with a real --model")
			}
			return r.run(cmd, args[0])
		},
	}
	flagbind.Bind(cmd.Flags(), r)
	cmd.Flags().IntVar(&r.flags.cfg.MaxSteps, "max-steps", 0, "stop after that many steps if the task is not done (0: the spec's own max_steps only)")
	r.flags.register(cmd)
	r.flags.obs.register(cmd.Flags(), true)
	r.tools.register(cmd, "", &r.flags.cfg.ToolDeclaration)
	r.ui.register(cmd)
	cmd.Flags().Lookup("root").Usage = `folder granted to the file tools (default: the spec file's folder); they work in the spec's "root" inside it and cannot leave it`
	return cmd
}

// grantedRoot is the folder --root grants the file tools, or "" when it
// is not given (the spec file's folder).
func grantedRoot(cmd *cobra.Command, tools *toolFlags) string {
	if cmd.Flags().Changed("root") {
		return tools.root
	}
	return ""
}

// specOpenErr is the usage error of a spec that did not open with the
// granted folder sandbox: a --root that is not a folder is --root's
// fault; any other error is the spec's, said after prefix (the flag that
// named the file, or "").
func specOpenErr(err error, sandbox, prefix string) error {
	if errors.Is(err, spec.ErrNoSandbox) {
		return usageErr("--root %s: not a folder; name an existing folder (the spec's \"root\" is inside it), or leave --root out for the spec file's folder: %w", sandbox, err)
	}
	return usageErr("%s%w", prefix, err)
}

// run solves the spec task of path and prints its summary.
func (r *runCmd) run(cmd *cobra.Command, path string) (err error) {
	sandbox := grantedRoot(cmd, &r.tools)
	var st *spec.Opened
	if path == "-" {
		st, err = spec.OpenReader(cmd.InOrStdin(), "standard input", ".", sandbox, r.tools.selection)
	} else {
		st, err = spec.OpenFile(path, sandbox, r.tools.selection)
	}
	if err != nil {
		return specOpenErr(err, sandbox, "")
	}
	defer st.Close()
	sp, ex, task := st.Spec, st.Executor, st.Task
	defer noteToolsRefused(cmd.ErrOrStderr(), &err)
	with := solverWith{steps: sp.MaxSteps, executor: ex, tools: st.Tools}
	return r.flags.solveTask(cmd, &r.ui, task, spec.Oracle{Spec: sp}, with, r.JSON, func(t runTotals, rep maker.Report) (any, string, bool, string) {
		name := cmp.Or(sp.Name, "unnamed")
		sum := specSummary{Spec: path, Name: name, Solved: t.Error == "" && task.Done(), State: task.State(),
			ToolCalls: rep.ToolCalls, Denied: rep.Denied, Root: ex.Root(), Tools: ex.Policy().String(), runTotals: t}
		return sum, fmt.Sprintf("spec %s (%s), k=%s, model %s: solved %v\nstate: %s\ntools: %s, under %s\n",
			name, path, r.flags.Settings.Margin.String(), r.flags.Shown(), sum.Solved, sum.State, sum.Tools, sum.Root), sum.Solved, "the task never said it was done"
	})
}
