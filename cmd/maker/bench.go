package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mdap-go/mdap/benchmarks"
	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/progress"
	"github.com/spf13/cobra"
)

// defaultBenchOut is where maker bench writes when --out is not given.
const defaultBenchOut = "bench-results"

// benchFlags are maker bench's own flags (flagbind).
type benchFlags struct {
	Out      string `flag:"out" usage:"folder for REPORT.md, report.json and the SVG charts"`
	JSON     bool   `flag:"json" usage:"print the whole report as JSON on stdout"`
	Progress string `flag:"progress" usage:"progress on stderr: auto (a bar per suite on a terminal, else a line per finished row), on (the bar) or off"`
	Merge    bool   `flag:"merge" usage:"keep the other suites of the report already in --out (its {data}), replacing only the suites run; the report names the run of each kept suite"`
}

func newBench() *cobra.Command {
	var opts benchmarks.Options
	f := benchFlags{Out: defaultBenchOut, Progress: "auto"}
	cmd := &cobra.Command{
		Use:     "bench",
		Short:   "Run the consensus-cost benchmarks: tables and charts of what k, parallelism and a model cost",
		Long:    help("bench"),
		Example: example("bench"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := fieldUsageErr(opts.Validate(), map[string]string{"Suites": "suite"}, "bench"); err != nil {
				return err
			}
			if f.Out == "" {
				return usageErr("--out \"\": give the folder to write the report into")
			}
			if fi, err := os.Stat(f.Out); err == nil && !fi.IsDir() {
				return usageErr("--out %s: is a file, not a folder", f.Out)
			}
			if !progress.Mode(f.Progress).Valid() {
				return usageErr("--progress %q: use auto, on or off", f.Progress)
			}
			return runBench(cmd, opts, f.Out, f.Merge, f.JSON, f.Progress)
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&opts.Suites, "suite", nil, "suite to run: "+strings.Join(benchmarks.Suites, ", ")+" (repeatable; default all)")
	fs.BoolVar(&opts.Quick, "quick", false, "run every suite small enough for CI (about a minute on two cores)")
	fs.Uint64Var(&opts.Seed, "seed", 1, "root seed of the simulated models")
	flagbind.Usage{"data": benchmarks.DataFile}.Bind(fs, &f)
	_ = cmd.RegisterFlagCompletionFunc("progress", cobra.FixedCompletions(progress.Modes, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// runBench runs the suites of opts, merges the report into --out's with
// --merge, writes it and prints the goals (or the whole report as JSON).
func runBench(cmd *cobra.Command, opts benchmarks.Options, out string, merge, asJSON bool, prog string) error {
	opts.Command = "maker " + strings.Join(os.Args[1:], " ")
	if len(os.Args) < 2 {
		opts.Command = "maker bench"
	}
	var finish func()
	opts.Progress, finish = progress.Suites(cmd.ErrOrStderr(), progress.Mode(prog))
	rep, ran, err := benchmarks.RunInto(cmd.Context(), opts, out, merge)
	finish()
	if err != nil && rep != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "maker: bench: the suites that finished (%s) are in %s\n", strings.Join(ran, ", "), filepath.Join(out, benchmarks.ReportFile))
	}
	var me *benchmarks.MergeError
	switch {
	case errors.As(err, &me):
		return usageErr("--merge: %v: give the --out folder of an earlier maker bench, or drop --merge", err)
	case err != nil && cmd.Context().Err() != nil:
		return interrupted("")
	case err != nil:
		return failed(err)
	}
	if asJSON {
		err = writeJSON(cmd.OutOrStdout(), rep)
	} else if err = rep.WriteSummary(cmd.OutOrStdout(), ran, out); err != nil {
		err = failed(err)
	}
	if err != nil { // the report could not be said: exit 1
		return err
	}
	return barErr(rep)
}

// barErr fails the command (exit 1) when a figure of the goals suite
// regressed past its bar; the report is written first.
func barErr(rep *benchmarks.Report) error {
	if err := rep.BarErr(); err != nil {
		return failed(err)
	}
	return nil
}
