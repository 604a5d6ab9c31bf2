package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
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

func newNATSLs() *cobra.Command {
	var (
		n      natsRun
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List what runs left on the engine: journals, task queues, routes",
		Long: `ls lists the journals (--journal nats:RUN), task queues (maker solve --nats)
and routes (the consumers of maker workers) on the engine, with their size,
last write and retention, and who holds a journal now. Signs in as the admin
(admin.nk of the credentials folder). Remove a run's leftovers with maker nats rm RUN.`,
		Example: `  maker nats ls --nats nats://127.0.0.1:4222
  maker nats ls --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := n.adminConnect(); err != nil {
				return err
			}
			defer n.closeNATS()
			ctx, cancel := context.WithTimeout(cmd.Context(), setupTimeout)
			defer cancel()
			list, err := cluster.List(ctx, n.js)
			if err != nil {
				return failed(fmt.Errorf("--nats: %w", err))
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
		Use:   "rm RUN...",
		Short: "Remove what a run or batch left on the engine",
		Long: `rm removes the journal of each RUN (--journal nats:RUN), or the task queue of
that name with its results and its tasks' journals. A journal whose lease is
held (its run is in progress) is never removed: rm exits 1 and says who holds
it. Names with nothing on the engine exit 2 when nothing was removed, 1
otherwise. Signs in as the admin (admin.nk of the credentials folder).`,
		Example: `  maker nats rm hanoi15
  maker nats rm solve-3f2a9c0d1e2b`,
		Args: cobra.MinimumNArgs(1),
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
				ctx, cancel := context.WithTimeout(cmd.Context(), setupTimeout)
				removed, err := cluster.RemoveRun(ctx, n.js, run)
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
					return failed(fmt.Errorf("--nats: %w", err))
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
