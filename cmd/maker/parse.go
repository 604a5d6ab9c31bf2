package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/inspect"
	"github.com/mdap-go/mdap/maker/replyfile"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/spf13/cobra"
)

// parseLine is one reply's verdict in maker parse --json.
type parseLine struct {
	File string `json:"file"`
	inspect.Verdict
	OutputTokens int    `json:"output_tokens"`
	Estimated    bool   `json:"estimated,omitempty"`
	StopReason   string `json:"stop_reason,omitempty"`
}

// parseFlags are maker parse's flags.
type parseFlags struct {
	asJSON    bool
	maxTokens int
	specPath  string
}

func newParse() *cobra.Command {
	f := &parseFlags{}
	cmd := &cobra.Command{
		Use:     "parse [FILE...]",
		Short:   "For each model reply: its red flag, or its canonical form and vote key",
		Long:    help("parse"),
		Example: example("parse"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.parse(cmd, args)
		},
	}
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "one JSON line per reply")
	cmd.Flags().IntVar(&f.maxTokens, "max-tokens", maker.DefaultMaxTokens, "reply cap in tokens; a longer reply is red-flagged")
	cmd.Flags().StringVar(&f.specPath, "spec", "", "check answers against this spec file's answer contract")
	return cmd
}

// parse judges each reply of args (stdin with none) and prints the
// verdicts; a reply that cannot be read is bad input and nothing is
// printed.
func (f *parseFlags) parse(cmd *cobra.Command, args []string) error {
	if f.maxTokens < 1 || f.maxTokens > maxTokensFlag {
		return usageErr("--max-tokens %d: use 1 to %d", f.maxTokens, maxTokensFlag)
	}
	var task maker.Task // the spec's, whose matcher groups the answers
	if f.specPath != "" {
		sp, err := spec.Load(f.specPath)
		if err != nil {
			return usageErr("--spec: %w", err)
		}
		task = spec.New(sp)
	}
	// The run's solver: its executor normalises a tool intent's
	// arguments before the key is taken, as a run's draw does.
	solver, err := runSolver(f.maxTokens, task != nil)
	if err != nil {
		return err
	}
	defer closeSolver(solver)
	if len(args) == 0 {
		args = []string{"-"}
	}
	lines, err := readVerdicts(cmd, solver, task, args)
	if err != nil {
		return err
	}
	if err := keyAsRun(solver, task, lines); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.asJSON {
		enc := json.NewEncoder(out)
		for _, l := range lines {
			_ = enc.Encode(l) // a failed write fails the command (see run)
		}
		return nil
	}
	printVerdicts(out, lines, f.maxTokens)
	return nil
}

// readVerdicts reads every reply of names first, then judges each as
// solver's draw would for task: a file that cannot be read is bad input.
func readVerdicts(cmd *cobra.Command, solver *maker.Solver, task maker.Task, names []string) ([]parseLine, error) {
	lines := make([]parseLine, 0, len(names))
	for _, name := range names {
		r, err := replyfile.Load(name, cmd.InOrStdin())
		if err != nil {
			return nil, usageErr("%w", err)
		}
		lines = append(lines, parseLine{File: name, Verdict: inspect.In(solver, task, r),
			OutputTokens: r.OutputTokens, Estimated: r.Estimated, StopReason: r.StopReason})
	}
	return lines, nil
}

// printVerdicts writes the verdicts for a person, then which replies vote
// together.
func printVerdicts(w io.Writer, lines []parseLine, maxTokens int) {
	var keys []string
	groups := map[string][]string{}
	flagged := 0
	for _, l := range lines {
		tokens := fmt.Sprintf("%d tokens", l.OutputTokens)
		if l.Estimated {
			tokens = "~" + tokens
		}
		if l.Flag != "" {
			flagged++
			fmt.Fprintf(w, "%s: red flag %q (%s, cap %d): %s\n", l.File, l.Flag, tokens, maxTokens, l.Reason)
			continue
		}
		fmt.Fprintf(w, "%s: key %s (%s): %s\n", l.File, l.Key, tokens, l.Canonical)
		if _, ok := groups[l.Key]; !ok {
			keys = append(keys, l.Key)
		}
		groups[l.Key] = append(groups[l.Key], l.File)
	}
	if len(lines) < 2 {
		return
	}
	for _, k := range keys {
		if files := groups[k]; len(files) > 1 {
			fmt.Fprintf(w, "vote together (key %s): %s\n", k, strings.Join(files, ", "))
		}
	}
	fmt.Fprintf(w, "%d replies: %s, %d red-flagged\n", len(lines), words.Plural(len(keys), "distinct answer"), flagged)
}
