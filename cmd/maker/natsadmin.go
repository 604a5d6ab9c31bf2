package main

import (
	"context"
	"errors"
	"fmt"

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

// adminContext is cluster.AdminContext for command on adminConnect's
// connection: at most setupTimeout, ended at once when the server
// refuses the credential.
func (n *natsRun) adminContext(parent context.Context, command string) (context.Context, context.CancelFunc) {
	return cluster.AdminContext(parent, n.nc, setupTimeout, command, n.creds())
}

// adminErr is the failure of an admin command's request (cluster.AdminErr):
// the server refused the credential, else err from --nats.
func adminErr(ctx context.Context, err error) error {
	if err = cluster.AdminErr(ctx, err); errors.As(err, new(*cluster.NotAdminError)) {
		return failed(err)
	}
	return failed(fmt.Errorf("--nats: %w", err))
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
			return cluster.WriteLeftovers(cmd.OutOrStdout(), list, asJSON)
		},
	}
	natsAdminFlags(cmd, &n)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
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
