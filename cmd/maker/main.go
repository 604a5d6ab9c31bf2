// Command maker runs MAKER-style voting orchestration from the shell: the
// paper's Towers of Hanoi task, the scaling laws, and the tool taxonomy.
//
// Exit status: 0 done, 1 the run failed (an undecided step, a spent
// budget), 2 bad usage or bad input.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/mdap-go/mdap/internal/buildinfo"
	"github.com/mdap-go/mdap/internal/gcpolicy"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitAborted = 130
)

// exitError carries the exit status of a command's error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr marks bad usage or bad input: exit status 2.
func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// failed marks a run that failed: exit status 1.
func failed(err error) error { return &exitError{code: exitFailed, err: err} }

func main() {
	// The heap floor, unless GOGC or GOMEMLIMIT is set (docs/speed.md).
	gcpolicy.Apply(os.Getenv, gcpolicy.DefaultFloor)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go exitAfterSignal(ctx, finished, signalGrace, os.Stderr) // ends when run returns, or exits the process
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	close(finished)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// No credential the process holds reaches its output, even when a
	// server echoes one in an error: the environment's keys now, a
	// --model ;key=VAR's when its flags are read (addSecret).
	sec := &observe.Secrets{}
	sec.Add(secrets()...)
	stdout, stderr = observe.RedactWriter(stdout, sec), observe.RedactWriter(stderr, sec)
	out := &checkedWriter{w: stdout}
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(stderr)
	executed, err := root.ExecuteContextC(context.WithValue(ctx, secretsKey{}, sec))
	if out.err != nil && !isUsage(err) {
		// A summary that never reached its reader is a failed command.
		err = failed(fmt.Errorf("writing the output failed: %w", out.err))
	}
	if err == nil {
		return exitOK
	}
	code := exitUsage // cobra's own errors: unknown command or flag, wrong arguments
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if code == exitFailed && ctx.Err() != nil {
			code = exitAborted
		}
	}
	if jsonLogs(executed, args) {
		// The last line too is a log record, as --log-format json asks.
		slog.New(slog.NewJSONHandler(stderr, nil)).Error("maker: "+err.Error(), "exit_status", code)
	} else {
		fmt.Fprintln(stderr, "maker:", err)
	}
	return code
}

// secretsKey is the context key of the run's observe.Secrets.
type secretsKey struct{}

// heldSecrets is the run's set of secrets its output is redacted of; nil
// outside run.
func heldSecrets(ctx context.Context) *observe.Secrets {
	sec, _ := ctx.Value(secretsKey{}).(*observe.Secrets)
	return sec
}

// addSecret adds a credential read from the command's flags to the set
// its output is redacted of.
func addSecret(ctx context.Context, secret string) {
	if sec := heldSecrets(ctx); sec != nil {
		sec.Add(secret)
	}
}

// checkedWriter remembers the first write error, so that output lost to a
// full disk or a closed pipe fails the command.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// writeJSON writes v as indented JSON, a command's --json output. Its
// error fails the command (exit 1): a value JSON cannot say (the command
// could not give its report, not a usage error) or a failed write (which
// run also catches).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return failed(err)
	}
	return nil
}

// interrupted is the error of a run stopped by a signal (exit status 130),
// worded for a person, with how to resume when there is a journal.
func interrupted(journal string) error {
	msg := "interrupted"
	if journal != "" {
		msg += fmt.Sprintf("; the decided steps are in %s: resume with --journal %s --resume and the same flags", journal, journal)
	}
	return &exitError{code: exitAborted, err: errors.New(msg)}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "maker",
		Short:         "Run long tasks through voting LLM microagents with zero errors",
		Long:          help("maker"),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%w (see '%s --help')", err, c.CommandPath())
	})
	root.Version = buildinfo.Program()
	root.SetVersionTemplate("maker {{.Version}}\n")
	root.AddCommand(newHanoi(), newRun(), newSolve(), newParse(), newKMin(), newCalibrate(), newTools(), newServeSim(), newMCP(), newNATS(), newWorker(), newBench(), newView(), newProblem())
	root.AddCommand(familyCommands()...)
	registerEnumCompletions(root)
	// cobra's completion command: maker completion bash|zsh|fish|powershell.
	// Alone it prints its help and exits 0 for any unknown shell; an
	// unknown shell is bad usage.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return usageErr("completion: name a shell: bash, zsh, fish or powershell (see 'maker completion --help')")
				}
				return usageErr("completion %q: use bash, zsh, fish or powershell", args[0])
			}
		}
	}
	return root
}
