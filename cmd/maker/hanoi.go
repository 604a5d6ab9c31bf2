package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/spf13/cobra"
)

// maxDisks bounds --disks: 2^30-1 steps is already days of model calls.
const maxDisks = 30

// hanoiSummary is the --json output of maker hanoi.
type hanoiSummary struct {
	Solved         bool           `json:"solved"`
	WrongSteps     int            `json:"wrong_steps"`
	Steps          int            `json:"steps"`
	Samples        int            `json:"samples"`
	Valid          int            `json:"valid"`
	Flagged        int            `json:"flagged"`
	Errors         int            `json:"errors"`
	Cancelled      int            `json:"cancelled"`
	Flags          map[string]int `json:"flags"`
	SamplesPerStep float64        `json:"samples_per_step"`
	InputTokens    int            `json:"input_tokens"`
	OutputTokens   int            `json:"output_tokens"`
	Resumed        int            `json:"resumed"`
	WallSeconds    float64        `json:"wall_seconds"`
	Disks          int            `json:"disks"`
	K              int            `json:"k"`
	Model          string         `json:"model"`
	Cost           float64        `json:"cost"` // dollars
	Models         []modelSummary `json:"models"`
	Seed           uint64         `json:"seed,omitempty"`
	Error          string         `json:"error,omitempty"`

	// --k auto: the steps by their k, and the run's own estimate of p.
	KHistogram map[int]int      `json:"k_histogram"`
	PEstimate  *maker.PEstimate `json:"p_estimate,omitempty"`
}

func newHanoi() *cobra.Command {
	var (
		flags  runFlags
		disks  int
		asJSON bool
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
			if disks < 1 || disks > maxDisks {
				return usageErr("--disks %d: use 1 to %d", disks, maxDisks)
			}
			if err := flags.validate(cmd); err != nil {
				return err
			}
			task, err := hanoi.New(disks)
			if err != nil {
				return usageErr("--disks: %w", err)
			}
			s, err := flags.solver(hanoi.Oracle{}, cmd.ErrOrStderr())
			defer flags.closeNATS() // after the journal's Close, deferred below
			if err != nil {
				return err
			}
			s.AdaptiveK = flags.adaptive(hanoi.TotalSteps(disks))
			if s.Journal != nil {
				defer func() {
					if cerr := s.Journal.Close(); cerr != nil && err == nil {
						err = failed(cerr)
					}
				}()
			}
			finish := flags.watch(s, cmd.ErrOrStderr(), 1<<disks-1)
			rep, runErrV := s.Solve(cmd.Context(), task)
			finish()
			if err := runErr(runErrV); isUsage(err) {
				return err // a journal that does not fit: no run to summarise
			}

			sum := hanoiSummary{
				Solved: runErrV == nil && task.Solved(), WrongSteps: task.WrongSteps(),
				Steps: rep.Steps, Samples: rep.Launched, Valid: rep.Valid, Flagged: rep.Flagged,
				Errors: rep.Errors, Cancelled: rep.Cancelled, Flags: maps.Clone(rep.Flags),
				SamplesPerStep: rep.SamplesPerStep(), InputTokens: rep.Usage.InputTokens,
				OutputTokens: rep.Usage.OutputTokens, Resumed: rep.Resumed,
				WallSeconds: rep.Wall.Seconds(), Disks: disks, K: flags.k, Model: flags.modelName(),
				Cost: rep.Cost, Models: modelSummaries(s, rep),
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
				fmt.Fprintf(out, "hanoi %d disks, k=%s, model %s: solved %v, %s\n", disks, flags.kText(), flags.modelName(), sum.Solved, plural(sum.WrongSteps, "wrong step"))
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
				return failed(fmt.Errorf("not solved: %s", plural(sum.WrongSteps, "wrong step")))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&disks, "disks", 10, fmt.Sprintf("number of disks, 1 to %d (2^N-1 steps)", maxDisks))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON summary on stdout")
	flags.register(cmd)
	return cmd
}
