package main

import (
	"fmt"
	"path/filepath"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/spf13/cobra"
)

// identityKind is a kind of identity the operator issues in the engine's
// credentials folder (cluster.Identities): maker nats worker, maker nats
// run.
type identityKind struct {
	cluster.Identities
	short string // Long and Example: help/nats-KIND.txt
	hint  string // printed after add: how to use the seed
}

// newNATSWorker is maker nats worker: worker identities.
func newNATSWorker() *cobra.Command {
	return newNATSIdentities(identityKind{cluster.WorkerIdentities, "Issue, list and revoke worker identities (one nkey per worker)",
		"on its machine: maker worker --nats-creds %s (copy the file there only)"})
}

// newNATSRun is maker nats run: run coordinator identities (tenants: each
// uses its own run only).
func newNATSRun() *cobra.Command {
	return newNATSIdentities(identityKind{cluster.RunIdentities, "Issue, list and revoke the coordinator identity of one run (a tenant)",
		"whoever runs it: --nats-creds %s (copy the file to them only)"})
}

// newNATSIdentities is maker nats worker or run, by kind: add, revoke
// and ls in the folder --creds.
func newNATSIdentities(kind identityKind) *cobra.Command {
	var creds string
	cmd := &cobra.Command{Use: kind.Kind, Short: kind.short, Long: help("nats-" + kind.Kind), Example: example("nats-" + kind.Kind),
		Args: cobra.NoArgs, RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	cmd.PersistentFlags().StringVar(&creds, "creds", cluster.DefaultCredsDir, "the engine's credentials folder (maker nats --creds; STORE/creds by default)")
	sub := func(use, short string, args cobra.PositionalArgs, run func(cmd *cobra.Command, dir string, args []string) error) *cobra.Command {
		c := &cobra.Command{Use: use, Short: short, Args: args,
			RunE: func(cmd *cobra.Command, args []string) error {
				dir, err := filepath.Abs(creds)
				if err != nil {
					return usageErr("--creds %q: %v", creds, err)
				}
				return run(cmd, dir, args)
			}}
		cmd.AddCommand(c)
		return c
	}
	var budget int64
	add := sub("add NAME", "Issue the "+kind.Kind+" identity NAME", cobra.ExactArgs(1), func(cmd *cobra.Command, dir string, args []string) error {
		given := int64(0) // none: the engine's --run-key-bytes
		if kind.Budgeted() && cmd.Flags().Changed("bytes") {
			if given = budget; budget < 1<<10 {
				return usageErr("--bytes %d: the run's journal budget, at least 1024 bytes", budget)
			}
		}
		seed, err := kind.Issue(dir, args[0], given)
		switch {
		case err != nil:
			return engineErr("", err, cluster.ErrConfig, cluster.ErrNotFound)
		case seed == "": // a run issued already keeps its key: only its budget changes
			fmt.Fprintf(cmd.ErrOrStderr(), "maker nats %s: the journal budget of %s is %d bytes from its next journal on (its key unchanged)\n", kind.Kind, args[0], budget)
			return nil
		}
		fmt.Fprintln(cmd.OutOrStdout(), seed)
		fmt.Fprintf(cmd.ErrOrStderr(), "maker nats %s: issued %s; "+kind.hint+"\n", kind.Kind, args[0], filepath.Base(seed))
		return nil
	})
	if kind.Budgeted() {
		add.Flags().Int64Var(&budget, "bytes", cluster.DefaultRunKeyBytes, "the run's journal budget in bytes (its journals' stream, which no other key shares; default: the engine's --run-key-bytes); given for a run already issued, sets only its budget, applied at its next journal")
	}
	sub("revoke NAME", "Revoke the "+kind.Kind+" identity NAME", cobra.ExactArgs(1), func(cmd *cobra.Command, dir string, args []string) error {
		if err := kind.Revoke(dir, args[0]); err != nil {
			return engineErr("", err, cluster.ErrConfig, cluster.ErrNotFound)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
		return nil
	})
	sub("ls", "List the "+kind.Kind+" identities issued", cobra.NoArgs, func(cmd *cobra.Command, dir string, _ []string) error {
		names, keys, err := kind.Issued(dir)
		if err != nil {
			return failed(err)
		}
		for _, n := range names {
			fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", n, keys[n])
		}
		return nil
	})
	return cmd
}
