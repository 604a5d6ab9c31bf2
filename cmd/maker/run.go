package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"

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

func newRun() *cobra.Command {
	var (
		flags  runFlags
		tools  toolFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "run SPEC.json",
		Short: "Run one task from a spec file, with its tools under --root and --tools",
		Long: `run solves the task a spec file describes (see maker/spec): each step is one
stateless microagent call that sees the spec's rules, the state and the last
tool result, and answers the next state or proposes one tool call; every step
is voted on first-to-ahead-by-k, and only the winning tool call runs, if the
--tools policy (read-only by default) allows it, inside --root.

--root defaults to the spec's "root" (a folder inside the spec file's folder),
else the spec file's folder. With --model sim (the default) the spec's
"script" drives the simulated model, so a run is offline.

solved means the task said it was done. Exit status 1 when it did not.`,
		Example: `  maker run testdata/spec/find-version.json
  maker run task.json --root ./repo --tools read_only,write_file --json
  maker run task.json --journal run.jsonl        # then, after a crash:
  maker run task.json --journal run.jsonl --resume
  maker run task.json --model openai:gpt-4.1-mini`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := flags.validate(cmd); err != nil {
				return err
			}
			if flags.natsURL != "" && slices.Contains(flags.models, "sim") {
				return usageErr("--nats with --model sim: the workers' simulated model answers Towers of Hanoi only (a spec's script does not travel); run a spec over --nats with a real --model")
			}
			path := args[0]
			sp, err := spec.Load(path)
			if err != nil {
				return usageErr("%w", err)
			}
			if !cmd.Flags().Changed("root") {
				tools.root = filepath.Join(filepath.Dir(path), sp.Root)
			}
			ex, err := tools.executor()
			if err != nil {
				return err
			}
			if c, ok := any(ex).(io.Closer); ok {
				defer c.Close()
			}
			task := spec.New(sp)
			if err := flags.obs.start(cmd.Context(), "maker", cmd.ErrOrStderr()); err != nil {
				return err
			}
			defer flags.obs.stop(cmd.Context())
			s, err := flags.solver(spec.Oracle{Spec: sp}, cmd.ErrOrStderr())
			defer flags.closeNATS() // after the journal's Close, deferred below
			if err != nil {
				return err
			}
			s.Executor = ex
			s.AdaptiveK = flags.adaptive(sp.MaxSteps)
			flags.watchRun(&flags.obs, s, cmd.ErrOrStderr())
			if s.Journal != nil {
				defer func() {
					if cerr := s.Journal.Close(); cerr != nil && err == nil {
						err = failed(cerr)
					}
				}()
			}
			finish := flags.watch(s, cmd.ErrOrStderr(), sp.MaxSteps)
			rep, runErrV := s.Solve(cmd.Context(), task)
			finish()
			if err := runErr(runErrV); isUsage(err) {
				return err // a journal that does not fit: no run to summarise
			}

			name := sp.Name
			if name == "" {
				name = "unnamed"
			}
			sum := specSummary{Spec: path, Name: name, Solved: runErrV == nil && task.Done(), State: task.State(),
				ToolCalls: rep.ToolCalls, Denied: rep.Denied, Root: ex.Root(), Tools: ex.Policy().String(),
				runTotals: flags.totals(cmd.Context(), s, rep, runErrV)}
			report(cmd.OutOrStdout(), asJSON, sum, fmt.Sprintf("spec %s (%s), k=%s, model %s: solved %v\nstate: %s\ntools: %s, under %s\n",
				name, path, flags.kText(), flags.modelName(), sum.Solved, sum.State, sum.Tools, sum.Root), rep, sum.runTotals)
			return flags.ending(cmd.Context(), runErrV, sum.Solved, "the task never said it was done")
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON summary on stdout")
	flags.register(cmd)
	flags.obs.register(cmd.Flags(), true)
	tools.register(cmd, "")
	cmd.Flags().Lookup("root").Usage = `folder the file tools work in; they cannot leave it (default: the spec's "root", else the spec file's folder)`
	return cmd
}
