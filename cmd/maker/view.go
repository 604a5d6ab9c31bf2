package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/batchview"
	"github.com/mdap-go/mdap/maker/view"
	"github.com/spf13/cobra"
)

// viewTokenEnv holds the token that guards a view on a non-loopback
// address; without it one is generated and printed once.
const viewTokenEnv = "MDAP_VIEW_TOKEN"

// viewFlags are maker view's flags (flagbind), with view.Limits'.
type viewFlags struct {
	Addr   string `flag:"addr" usage:"listen on HOST:PORT (port 0: a free one); every request needs the token (${env}, or one generated and printed)"`
	NoAuth bool   `flag:"no-auth" usage:"serve without a token, on a loopback --addr only: every user of this machine can then read the run"`
	PNG    string `flag:"png" usage:"write the step map to this PNG file and exit"`
	HTML   string `flag:"html" usage:"write a self-contained HTML report to this file and exit"`
	view.Limits
}

func newView() *cobra.Command {
	f := viewFlags{Addr: "127.0.0.1:0"}
	cmd := &cobra.Command{
		Use:     "view JOURNAL|STATE_FOLDER",
		Short:   "Show a run: a live web page of its counters and step map, or a PNG or HTML export",
		Long:    help("view"),
		Example: example("view"),
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return runView(cmd, args[0], f) },
	}
	flagbind.Usage{"env": viewTokenEnv}.Bind(cmd.Flags(), &f)
	return cmd
}

// viewFlagOf names the flag of each view.Limits field.
var viewFlagOf = flagbind.Names(nil, view.Limits{})

// runView exports or serves the run or batch at path.
func runView(cmd *cobra.Command, path string, f viewFlags) error {
	ctx := cmd.Context()
	src, err := view.Open(path, f.Limits)
	switch {
	case fielderr.As(err) != nil:
		return fieldUsageErr(err, viewFlagOf, "view")
	case errors.Is(err, view.ErrResultsOfRun), errors.Is(err, view.ErrResults):
		return usageErr("--results: %w; give the results file written by maker solve --out, with a STATE_FOLDER", err)
	case errors.Is(err, view.ErrPath):
		return usageErr("%s: %w; name a journal file written by --journal or a state folder written by maker solve --state", path, err)
	case err != nil:
		return usageErr("%w", err)
	}
	defer src.Close()
	if f.PNG != "" || f.HTML != "" {
		switch err := src.Export(f.PNG, f.HTML); {
		case errors.Is(err, view.ErrExportFolder):
			return usageErr("--png and --html: %s: %w; name one task's journal in %s, not the folder", path, err, path)
		case errors.Is(err, view.ErrNoHeader):
			return usageErr("--png and --html: %s: %w", path, err)
		case errors.Is(err, view.ErrExportPath):
			return usageErr("%w", err)
		case err != nil:
			return failed(err)
		}
		return nil
	}
	l, err := listenView(ctx, "--addr", f.Addr, f.NoAuth)
	if err != nil {
		return err
	}
	srv, url := serveView(l, cmd, cmd.ErrOrStderr(), src.Config())
	defer srv.Close()
	what := path
	if src.IsFolder() {
		what = "the batch in " + path
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "maker view: %s at %s (Ctrl-C ends it)\n", what, url)
	if err := src.Follow(ctx, 0); err != nil {
		return failed(err)
	}
	return interrupted("")
}

// listenView listens on addr with the token in $MDAP_VIEW_TOKEN, or a
// generated one, or none with noAuth (view.ListenGuarded).
func listenView(ctx context.Context, flag, addr string, noAuth bool) (*view.Guarded, error) {
	l, err := view.ListenGuarded(addr, os.Getenv(viewTokenEnv), noAuth)
	switch {
	case errors.Is(err, view.ErrNoAuthRemote):
		return nil, usageErr("--no-auth serves on a loopback %s only; %s reaches other machines: leave --no-auth out (a token is generated) or listen on 127.0.0.1", flag, addr)
	case errors.Is(err, view.ErrToken):
		return nil, usageErr("$%s: %w", viewTokenEnv, err)
	case err != nil:
		return nil, usageErr("%s %s: %w", flag, addr, err)
	}
	if l.Token != "" {
		addSecret(ctx, l.Token)
	}
	return l, nil
}

// serveView serves cfg on l and returns the server and the
// page's address; a generated token is printed once, unredacted.
func serveView(l *view.Guarded, cmd *cobra.Command, stderr io.Writer, cfg view.Config) (*view.Server, string) {
	srv, url := l.Serve(cfg)
	if l.Generated {
		// Once, past the redaction of everything else: the person opens it.
		notice(cmd, unredacted(stderr),
			fmt.Sprintf("maker: the view on %s needs a token (no $%s was set, so one was generated); open\n  %s?token=%s\nor send Authorization: Bearer %s\n", srv.Addr(), viewTokenEnv, url, l.Token, l.Token),
			"maker: the view needs a token (no $"+viewTokenEnv+" was set, so one was generated): open URL?token=TOKEN or send Authorization: Bearer TOKEN",
			"url", url, "token", l.Token)
	} else if l.Token != "" {
		notice(cmd, stderr,
			fmt.Sprintf("maker: the view on %s needs the token in $%s: open %s?token=$%s\n", srv.Addr(), viewTokenEnv, url, viewTokenEnv),
			"maker: the view needs the token in $"+viewTokenEnv+": open URL?token=$"+viewTokenEnv, "url", url)
	}
	return srv, url
}

// uiFlag is --ui ADDR of the run commands: the view's page, fed in
// process by the Solver.
type uiFlag struct {
	addr string
	l    *view.Guarded
}

// register adds --ui to cmd, and listens on it before the command runs
// (a bad address or a taken port is refused before anything is written).
func (u *uiFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&u.addr, "ui", "", "serve the run's live view (maker view's page) on HOST:PORT while it runs (port 0: a free one, printed on stderr); every request needs the token ($"+viewTokenEnv+", or one generated and printed)")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) (err error) {
		if u.addr != "" {
			u.l, err = listenView(cmd.Context(), "--ui", u.addr, false)
		}
		return err
	}
}

// attach serves the view of s's run of task, with --ui, and returns what
// stops it. Call it after the other callbacks of s are set (it wraps
// Progress and OnSample) and before Solve.
func (u *uiFlag) attach(cmd *cobra.Command, s *maker.Solver, task maker.Task, f *runFlags) (stop func()) {
	if u.l == nil {
		return func() {}
	}
	cfg, done := view.AttachConfig(s, f.viewInfo(view.SolverInfo(s, task)))
	return u.serve(cmd, cfg, "the run's view", done)
}

// viewInfo adds to info what the flags say of the run and its Solver does
// not: the cap (--max-cost) and the route the samples go over (--nats).
// The target is the Solver's (SolverInfo reads it from --k auto's policy).
func (f *runFlags) viewInfo(info view.Info) view.Info {
	if f.MaxCost > 0 {
		info.CostCap = f.MaxCost
	}
	if f.nats.URL != "" {
		info.Remote = "over NATS, route " + info.Model
	}
	return info
}

// attachBatch serves the view of a batch with --ui: its tasks by status
// and each step loop's run live. It wraps r's Build (a view of each
// task's Solver) and its results (a task's status once recorded); call
// it once r is set and before r runs.
func (u *uiFlag) attachBatch(cmd *cobra.Command, f *runFlags, source string, jobs []batch.Job, store *batch.Store, r *batch.Runner) (stop func()) {
	if u.l == nil {
		return func() {}
	}
	b := view.NewBatch(source, f.MaxCost)
	batchview.Attach(b, jobs, store, r, f.viewInfo)
	return u.serve(cmd, view.Config{Batch: b}, "the batch's view", func() {})
}

// serve serves cfg on --ui's listener and says where, once. stop closes
// the server, then calls done.
func (u *uiFlag) serve(cmd *cobra.Command, cfg view.Config, what string, done func()) (stop func()) {
	srv, url := serveView(u.l, cmd, cmd.ErrOrStderr(), cfg)
	notice(cmd, cmd.ErrOrStderr(), fmt.Sprintf("maker: %s at %s\n", what, url), "maker: "+what, "url", url)
	return func() {
		_ = srv.Close()
		done()
	}
}

// attachDecomposition serves the view of a decomposition (maker multiply,
// sort) with --ui: its decisions, samples and cost, followed in its
// journal, which --ui needs. It returns what stops it, after a last read.
func (u *uiFlag) attachDecomposition(cmd *cobra.Command, family, journal string) (stop func(), err error) {
	if u.l == nil {
		return func() {}, nil
	}
	if journal == "" {
		_ = u.l.Close()
		return nil, usageErr("--ui on maker %s follows its journal: give --journal FILE too", family)
	}
	b, stopFollow := view.WatchDecomposition(cmd.Context(), family, journal)
	stopView := u.serve(cmd, view.Config{Batch: b}, "the run's view", func() {})
	return func() {
		stopFollow() // its last read is in before the view closes
		stopView()
	}, nil
}
