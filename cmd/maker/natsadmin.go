package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/spf13/cobra"
)

// natsAdminFlags are the flags of maker nats ls, rm and provision: the
// server, and the admin's credential (no other role may list the engine).
func natsAdminFlags(cmd *cobra.Command, n *natsRun) {
	cmd.Flags().StringVar(&n.natsURL, "nats", "nats://"+cluster.DefaultAddr, "NATS URL of the engine")
	registerNATSCreds(cmd.Flags(), &n.natsCreds)
}

func (n *natsRun) adminConnect() error {
	if err := checkNATSURL(n.natsURL); err != nil {
		return err
	}
	return n.connectNATS(cluster.RoleAdmin, "maker nats admin")
}

// notAdminError: the server refused an admin command's request because
// the credential it signed in with is not the admin's.
type notAdminError struct{ msg string }

func (e *notAdminError) Error() string { return e.msg }

// adminContext returns the context of an admin command's requests on the
// connection of adminConnect: at most setupTimeout, and ended at once,
// with a notAdminError as its cause, when the server answers a request
// with a permissions violation (a request the role may not send is never
// answered: without this the command waited setupTimeout and said only
// "context deadline exceeded"). One admin context at a time.
func (n *natsRun) adminContext(parent context.Context, command string) (context.Context, context.CancelFunc) {
	ctx, refuse := context.WithCancelCause(parent)
	timed, cancel := context.WithTimeout(ctx, setupTimeout)
	n.nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			refuse(&notAdminError{n.notAdmin(command, err)})
		}
	})
	return timed, func() { cancel(); refuse(nil) }
}

// adminErr is the error of an admin command's failed request: the
// notAdminError that ended ctx, else err as a failure of --nats.
func adminErr(ctx context.Context, err error) error {
	var na *notAdminError
	if errors.As(context.Cause(ctx), &na) {
		return failed(na)
	}
	return failed(fmt.Errorf("--nats: %w", err))
}

// notAdmin says that command needs the admin's credential, which one it
// was given (its role, found by its public key among the .pub files of
// its folder), and where the admin's is.
func (n *natsRun) notAdmin(command string, err error) string {
	path, from := n.credsPath()
	given := "the credential it was given"
	admin := cluster.SeedFile("STORE/creds", cluster.RoleAdmin)
	if path != "" {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			path = cluster.SeedFile(path, cluster.RoleAdmin)
		}
		given = fmt.Sprintf("the credential %s (%s)", path, from)
		if role := seedRole(path); role != "" {
			given = fmt.Sprintf("the %s credential %s (%s)", role, path, from)
		}
		if a := cluster.SeedFile(filepath.Dir(path), cluster.RoleAdmin); a != path {
			if _, serr := os.Stat(a); serr == nil {
				admin = a
			}
		}
	}
	return fmt.Sprintf("%s needs the admin's credential, and was given %s: the server refused it (%v); give the admin's seed: --nats-creds %s (or its folder, or $%s)", command, given, err, admin, natsCredsEnv)
}

// seedRole names the role of the seed file path: the ROLE.pub file of
// its folder that lists its public key, else its folder (workers/ or
// runs/: an issued identity), else its name (ROLE.nk) when that is a
// role's; "" when none says.
func seedRole(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var pub string
	if kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(raw)))); err == nil {
		pub, _ = kp.PublicKey()
	}
	roles := []cluster.Role{cluster.RoleAdmin, cluster.RoleCoordinator, cluster.RoleWorker}
	for _, r := range roles {
		keys, err := os.ReadFile(cluster.PubFile(filepath.Dir(path), r))
		if pub != "" && err == nil && slices.Contains(strings.Fields(string(keys)), pub) {
			return string(r)
		}
	}
	// An issued identity: workers/NAME.nk, runs/RUN.nk.
	switch filepath.Base(filepath.Dir(path)) {
	case "workers":
		return string(cluster.RoleWorker)
	case "runs":
		return "run coordinator"
	}
	for _, r := range roles {
		if filepath.Base(path) == filepath.Base(cluster.SeedFile("", r)) {
			return string(r)
		}
	}
	return ""
}

func newNATSLs() *cobra.Command {
	var (
		n      natsRun
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "ls",
		Short:   "List what runs left on the engine: journals, task queues, routes",
		Long:    help("nats-ls"),
		Example: example("nats-ls"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := n.adminConnect(); err != nil {
				return err
			}
			defer n.closeNATS()
			ctx, cancel := n.adminContext(cmd.Context(), "maker nats ls")
			defer cancel()
			list, err := cluster.List(ctx, n.js)
			if err != nil {
				return adminErr(ctx, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if list == nil {
					list = []cluster.Leftover{}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KIND\tNAME\tMESSAGES\tBYTES\tLAST WRITE\tKEPT\tHELD BY")
			for _, l := range list {
				last := "-"
				if !l.Last.IsZero() {
					last = l.Last.UTC().Format(time.RFC3339)
				}
				kept := "until removed"
				if l.Retention > 0 {
					kept = l.Retention.String()
					if l.Kind == "route" {
						kept = "idle " + kept
					}
				}
				msgs := fmt.Sprint(l.Messages)
				if l.Kind == "tasks" {
					msgs = fmt.Sprintf("%d (+%d results)", l.Messages, l.Results)
				}
				kind, size := l.Kind, "-" // a shared stream counts messages per run, not bytes
				if l.Bytes > 0 {
					size = fmt.Sprint(l.Bytes)
				}
				if l.Legacy {
					kind += " (earlier mdap)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", kind, l.Name, msgs, size, last, kept, cmpStr(l.Holder, "-"))
			}
			return tw.Flush()
		},
	}
	natsAdminFlags(cmd, &n)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func cmpStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func newNATSRm() *cobra.Command {
	var n natsRun
	cmd := &cobra.Command{
		Use:     "rm RUN...",
		Short:   "Remove what a run or batch left on the engine",
		Long:    help("nats-rm"),
		Example: example("nats-rm"),
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, run := range args {
				if cluster.CheckRunName(run) != nil {
					return usageErr("run name %q: 1 to 64 letters, digits, '-' or '_' (maker nats ls lists them)", run)
				}
			}
			if err := n.adminConnect(); err != nil {
				return err
			}
			defer n.closeNATS()
			var missing []string
			removedAny := false
			for _, run := range args {
				ctx, cancel := n.adminContext(cmd.Context(), "maker nats rm")
				removed, err := cluster.RemoveRun(ctx, n.js, run)
				if err != nil && !errors.Is(err, cluster.ErrNotFound) && !errors.Is(err, maker.ErrJournalLocked) {
					err = adminErr(ctx, err)
				}
				cancel()
				for _, r := range removed {
					removedAny = true
					fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", r)
				}
				switch {
				case errors.Is(err, cluster.ErrNotFound):
					missing = append(missing, run)
				case errors.Is(err, maker.ErrJournalLocked):
					return failed(fmt.Errorf("%s is in progress, not removed: %w", run, err))
				case err != nil:
					return err
				}
			}
			if len(missing) > 0 && removedAny {
				return failed(fmt.Errorf("nothing named %q on the engine (the others were removed)", missing))
			}
			if len(missing) > 0 {
				return usageErr("nothing named %q on the engine (maker nats ls lists what is there)", missing)
			}
			return nil
		},
	}
	natsAdminFlags(cmd, &n)
	return cmd
}
