package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/spf13/cobra"
)

// specSummary is the --json output of maker run.
type specSummary struct {
	Spec           string          `json:"spec"`
	Name           string          `json:"name"`
	Solved         bool            `json:"solved"`
	State          json.RawMessage `json:"state"`
	Steps          int             `json:"steps"`
	Samples        int             `json:"samples"`
	Valid          int             `json:"valid"`
	Flagged        int             `json:"flagged"`
	Errors         int             `json:"errors"`
	Cancelled      int             `json:"cancelled"`
	Flags          map[string]int  `json:"flags"`
	SamplesPerStep float64         `json:"samples_per_step"`
	InputTokens    int             `json:"input_tokens"`
	OutputTokens   int             `json:"output_tokens"`
	Cost           float64         `json:"cost"`
	ToolCalls      int             `json:"tool_calls"`
	Denied         int             `json:"denied"`
	Resumed        int             `json:"resumed"`
	WallSeconds    float64         `json:"wall_seconds"`
	Root           string          `json:"root"`
	Tools          string          `json:"tools"`
	K              int             `json:"k"`
	Model          string          `json:"model"`
	Models         []modelSummary  `json:"models"`
	Seed           uint64          `json:"seed,omitempty"`
	Error          string          `json:"error,omitempty"`

	// --k auto: the steps by their k, and the run's own estimate of p.
	KHistogram map[int]int      `json:"k_histogram"`
	PEstimate  *maker.PEstimate `json:"p_estimate,omitempty"`
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
			s, err := flags.solver(spec.Oracle{Spec: sp}, cmd.ErrOrStderr())
			defer flags.closeNATS() // after the journal's Close, deferred below
			if err != nil {
				return err
			}
			s.Executor = ex
			s.AdaptiveK = flags.adaptive(sp.MaxSteps)
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
			sum := specSummary{
				Spec: path, Name: name, Solved: runErrV == nil && task.Done(), State: task.State(),
				Steps: rep.Steps, Samples: rep.Launched, Valid: rep.Valid, Flagged: rep.Flagged,
				Errors: rep.Errors, Cancelled: rep.Cancelled, Flags: maps.Clone(rep.Flags),
				SamplesPerStep: rep.SamplesPerStep(), InputTokens: rep.Usage.InputTokens,
				OutputTokens: rep.Usage.OutputTokens, Cost: rep.Cost, ToolCalls: rep.ToolCalls, Denied: rep.Denied,
				Resumed: rep.Resumed, WallSeconds: rep.Wall.Seconds(), Root: ex.Root(), Tools: ex.Policy().String(),
				K: flags.k, Model: flags.modelName(), Models: modelSummaries(s, rep),
				KHistogram: maps.Clone(rep.KHistogram), PEstimate: flags.pEstimate(s, rep),
			}
			if sum.Flags == nil {
				sum.Flags = map[string]int{}
			}
			if slices.Contains(flags.models, "sim") {
				sum.Seed = flags.seed
			}
			if runErrV != nil {
				sum.Error = runErrV.Error()
				if cmd.Context().Err() != nil {
					sum.Error = "interrupted"
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				_ = enc.Encode(sum) // a failed write fails the command (see run)
			} else {
				fmt.Fprintf(out, "spec %s (%s), k=%s, model %s: solved %v\n", name, path, flags.kText(), flags.modelName(), sum.Solved)
				fmt.Fprintf(out, "state: %s\n", sum.State)
				fmt.Fprintf(out, "tools: %s, under %s\n", sum.Tools, sum.Root)
				fmt.Fprint(out, rep.String())
				if sum.PEstimate != nil {
					fmt.Fprintf(out, "k auto: %s\n", sum.PEstimate)
				}
			}
			switch {
			case runErrV != nil && cmd.Context().Err() != nil:
				return interrupted(flags.journal)
			case runErrV != nil:
				return runErr(runErrV)
			case !sum.Solved:
				return failed(fmt.Errorf("not solved: the task never said it was done"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON summary on stdout")
	flags.register(cmd)
	tools.register(cmd, "")
	cmd.Flags().Lookup("root").Usage = `folder the file tools work in; they cannot leave it (default: the spec's "root", else the spec file's folder)`
	return cmd
}
