package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/view"
	"github.com/spf13/cobra"
)

// viewTokenEnv holds the token that guards a view on a non-loopback
// address; without it one is generated and printed once.
const viewTokenEnv = "MDAP_VIEW_TOKEN"

func newView() *cobra.Command {
	var addr, pngOut, htmlOut string
	var noAuth bool
	cmd := &cobra.Command{
		Use:   "view JOURNAL",
		Short: "Show a run: a live web page of its counters and step map, or a PNG or HTML export",
		Long: `view serves one read-only web page showing the run a journal records (a
file written with --journal), updated live as the run appends to it: steps
decided and left, ETA, samples per step, the red-flag rate, contested and
escalated steps, tokens, cost (from the journal's checkpoints), each model's
share, and the step map: every step one cell (a million steps fit 1024×1024),
coloured by the samples it took, red flags, contested and escalated; click a
cell to see that step's record (its votes per answer key, counts, flags,
usage, models, winner, tool call and observation). The journal does not
record every sample in order, so neither does the page.

The page's assets are built in (no CDN: it works offline). It listens on
--addr, 127.0.0.1 with a free port by default, printed on stderr, and
requires a token, on loopback too (any user of the machine reaches a loopback
port, and the page shows the run's answers, which the journal's 0600 keeps
from them): $` + viewTokenEnv + `, else one is generated and printed once. Open
the printed address with ?token=..., which the page turns into a cookie only
this origin gets and drops from the address bar, or send Authorization:
Bearer TOKEN. --no-auth serves without one, on loopback only. The journal is read, never locked or written:
view a running run's journal while it runs. Ctrl-C ends it (exit status 130).

--png FILE writes the step map as a PNG, --html FILE a self-contained report
(style inline, the map a data: URL, no script): both read the journal as it
is and exit 0, serving nothing.`,
		Example: `  maker view run.jsonl                       # prints http://127.0.0.1:PORT/
  maker view run.jsonl --addr 127.0.0.1:8080
  maker view run.jsonl --png map.png
  maker view run.jsonl --html report.html
  maker hanoi --disks 12 --ui 127.0.0.1:0    # the same page, in process`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runView(cmd, args[0], addr, pngOut, htmlOut, noAuth)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "addr", "127.0.0.1:0", "listen on HOST:PORT (port 0: a free one); every request needs the token ($"+viewTokenEnv+", or one generated and printed)")
	fs.BoolVar(&noAuth, "no-auth", false, "serve without a token, on a loopback --addr only: every user of this machine can then read the run")
	fs.StringVar(&pngOut, "png", "", "write the step map to this PNG file and exit")
	fs.StringVar(&htmlOut, "html", "", "write a self-contained HTML report to this file and exit")
	return cmd
}

func runView(cmd *cobra.Command, path, addr, pngOut, htmlOut string, noAuth bool) error {
	ctx := cmd.Context()
	j, err := view.OpenFile(path)
	if err != nil {
		return usageErr("%s: %w; name a journal file written by --journal", path, err)
	}
	defer j.Close()
	if _, err := j.Read(); err != nil {
		return usageErr("%w", err)
	}
	if st := j.Run().Stats(); st.Task == "" && (pngOut != "" || htmlOut != "") {
		return usageErr("%s holds no journal header yet: nothing to export", path)
	}
	if pngOut != "" || htmlOut != "" {
		if pngOut != "" {
			if err := writeExport(pngOut, j.Run().WritePNG); err != nil {
				return err
			}
		}
		if htmlOut != "" {
			if err := writeExport(htmlOut, j.Run().WriteHTML); err != nil {
				return err
			}
		}
		return nil
	}
	l, err := listenView(ctx, "--addr", addr, noAuth)
	if err != nil {
		return err
	}
	srv, url := l.serve(cmd, cmd.ErrOrStderr(), view.Config{Run: j.Run(), Records: j})
	defer srv.Close()
	fmt.Fprintf(cmd.ErrOrStderr(), "maker view: %s at %s (Ctrl-C ends it)\n", path, url)
	if err := j.Follow(ctx, 0); err != nil {
		return failed(err)
	}
	return interrupted("")
}

// viewListener is a view's listening socket and its token, made before
// anything else is (a taken port writes nothing).
type viewListener struct {
	ln        net.Listener
	token     string
	generated bool
}

// listenView listens on addr, with a token unless noAuth (refused but
// on loopback).
func listenView(ctx context.Context, flag, addr string, noAuth bool) (*viewListener, error) {
	lo, err := view.Loopback(addr)
	if err != nil {
		return nil, usageErr("%s: %w", flag, err)
	}
	if noAuth && !lo {
		return nil, usageErr("--no-auth serves on a loopback %s only; %s reaches other machines: leave --no-auth out (a token is generated) or listen on 127.0.0.1", flag, addr)
	}
	var l viewListener
	if !noAuth {
		l.token = os.Getenv(viewTokenEnv)
		if l.token == "" {
			l.token, l.generated = view.NewToken(), true
		}
		if err := view.CheckToken(l.token); err != nil {
			return nil, usageErr("$%s: %w", viewTokenEnv, err)
		}
		addSecret(ctx, l.token)
	}
	if l.ln, err = view.Listen(addr); err != nil {
		return nil, usageErr("%s %s: %w", flag, addr, err)
	}
	return &l, nil
}

// serve serves cfg on the listener and returns the server and the
// page's address; a generated token is printed once, unredacted.
func (l *viewListener) serve(cmd *cobra.Command, stderr io.Writer, cfg view.Config) (*view.Server, string) {
	cfg.Token = l.token
	h, _ := view.Handler(cfg) // the token is checked by listenView
	srv := view.Serve(l.ln, h)
	url := "http://" + srv.Addr() + "/"
	if l.generated {
		// Once, past the redaction of everything else: the person opens it.
		notice(cmd, unredacted(stderr),
			fmt.Sprintf("maker: the view on %s needs a token (no $%s was set, so one was generated); open\n  %s?token=%s\nor send Authorization: Bearer %s\n", srv.Addr(), viewTokenEnv, url, l.token, l.token),
			"maker: the view needs a token (no $"+viewTokenEnv+" was set, so one was generated): open URL?token=TOKEN or send Authorization: Bearer TOKEN",
			"url", url, "token", l.token)
	} else if l.token != "" {
		notice(cmd, stderr,
			fmt.Sprintf("maker: the view on %s needs the token in $%s: open %s?token=$%s\n", srv.Addr(), viewTokenEnv, url, viewTokenEnv),
			"maker: the view needs the token in $"+viewTokenEnv+": open URL?token=$"+viewTokenEnv, "url", url)
	}
	return srv, url
}

// writeExport writes a file whole or not at all: into a temporary file
// beside it, renamed over it once complete. The file is 0600, as the
// journal it shows is.
func writeExport(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return usageErr("%s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := errors.Join(write(tmp), tmp.Close()); err != nil {
		return failed(fmt.Errorf("writing %s: %w", path, err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return failed(fmt.Errorf("writing %s: %w", path, err))
	}
	return nil
}

// uiFlag is --ui ADDR of the run commands: the view's page, fed in
// process by the Solver.
type uiFlag struct {
	addr string
	l    *viewListener
}

// register adds --ui to cmd, and listens on it before the command runs
// (a bad address or a taken port is refused before anything is written).
func (u *uiFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&u.addr, "ui", "", "serve the run's live view (maker view's page) on HOST:PORT while it runs (port 0: a free one, printed on stderr); every request needs the token ($"+viewTokenEnv+", or one generated and printed)")
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) (err error) {
		if pre != nil {
			if err := pre(cmd, args); err != nil {
				return err
			}
		}
		if u.addr != "" {
			u.l, err = listenView(cmd.Context(), "--ui", u.addr, false)
		}
		return err
	}
}

// attach serves the view of s's run of task, with --ui, and returns what
// stops it. Call it after the other callbacks of s are set (it wraps
// Progress and OnSample) and before Solve.
func (u *uiFlag) attach(cmd *cobra.Command, s *maker.Solver, task maker.Task) (stop func()) {
	if u.l == nil {
		return func() {}
	}
	live := view.Attach(s, view.SolverInfo(s, task))
	var records view.Records = live
	var journal *view.File
	if s.Journal != nil {
		// A file journal answers the clicks on steps older than the
		// ones kept in memory (a journal on the engine has no file).
		if f, err := view.OpenFile(s.Journal.Path()); err == nil {
			journal, records = f, view.WithJournal(live, f)
		}
	}
	srv, url := u.l.serve(cmd, cmd.ErrOrStderr(), view.Config{Run: live.Run(), Records: records})
	notice(cmd, cmd.ErrOrStderr(), fmt.Sprintf("maker: the run's view at %s\n", url), "maker: the run's view", "url", url)
	return func() {
		_ = srv.Close()
		if journal != nil {
			_ = journal.Close()
		}
	}
}
