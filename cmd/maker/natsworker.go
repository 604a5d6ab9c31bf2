package main

import (
	"fmt"
	"path/filepath"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/spf13/cobra"
)

// identityKind is a kind of identity the operator issues in the engine's
// credentials folder: maker nats worker, maker nats run.
type identityKind struct {
	use, short string // Long and Example: help/nats-USE.txt
	add        func(dir, name string) (string, error)
	revoke     func(dir, name string) error
	issued     func(dir string) ([]string, map[string]string, error)
	hint       string // printed after add: how to use the seed
	// setBytes, if set, records a journal budget (maker nats run add
	// --bytes): given alone for a name already issued, add sets only it.
	setBytes func(dir, name string, n int64) error
}

// newNATSWorker is maker nats worker: worker identities.
func newNATSWorker() *cobra.Command {
	return newNATSIdentities(identityKind{
		use:   "worker",
		short: "Issue, list and revoke worker identities (one nkey per worker)",
		add:   cluster.AddWorker, revoke: cluster.RevokeWorker, issued: cluster.IssuedWorkers,
		hint: "on its machine: maker worker --nats-creds %s (copy the file there only)",
	})
}

// newNATSRun is maker nats run: run coordinator identities (tenants: each
// uses its own run only).
func newNATSRun() *cobra.Command {
	return newNATSIdentities(identityKind{
		use:   "run",
		short: "Issue, list and revoke the coordinator identity of one run (a tenant)",
		add:   cluster.AddRunCoordinator, revoke: cluster.RevokeRunCoordinator, issued: cluster.IssuedRunCoordinators,
		hint:     "whoever runs it: --nats-creds %s (copy the file to them only)",
		setBytes: cluster.SetRunKeyBytes,
	})
}

// newNATSIdentities is maker nats worker or run, by kind: add, revoke
// and ls in the folder --creds.
func newNATSIdentities(kind identityKind) *cobra.Command {
	var creds string
	cmd := &cobra.Command{Use: kind.use, Short: kind.short, Long: help("nats-" + kind.use), Example: example("nats-" + kind.use),
		Args: cobra.NoArgs, RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	cmd.PersistentFlags().StringVar(&creds, "creds", defaultCredsDir, "the engine's credentials folder (maker nats --creds; STORE/creds by default)")
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
	add := sub("add NAME", "Issue the "+kind.use+" identity NAME", cobra.ExactArgs(1), func(cmd *cobra.Command, dir string, args []string) error {
		withBytes := kind.setBytes != nil && cmd.Flags().Changed("bytes")
		if withBytes && budget < 1<<10 {
			return usageErr("--bytes %d: the run's journal budget, at least 1024 bytes", budget)
		}
		if withBytes {
			// A run issued already keeps its key: only its budget changes.
			if _, keys, err := kind.issued(dir); err == nil && keys[args[0]] != "" {
				if err := kind.setBytes(dir, args[0], budget); err != nil {
					return engineErr("", err, cluster.ErrConfig, cluster.ErrNotFound)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "maker nats %s: the journal budget of %s is %d bytes from its next journal on (its key unchanged)\n", kind.use, args[0], budget)
				return nil
			}
		}
		seed, err := kind.add(dir, args[0])
		if err == nil && withBytes {
			err = kind.setBytes(dir, args[0], budget)
		}
		if err != nil {
			return engineErr("", err, cluster.ErrConfig, cluster.ErrNotFound)
		}
		fmt.Fprintln(cmd.OutOrStdout(), seed)
		fmt.Fprintf(cmd.ErrOrStderr(), "maker nats %s: issued %s; "+kind.hint+"\n", kind.use, args[0], filepath.Base(seed))
		return nil
	})
	if kind.setBytes != nil {
		add.Flags().Int64Var(&budget, "bytes", cluster.DefaultRunKeyBytes, "the run's journal budget in bytes (its journals' stream, which no other key shares; default: the engine's --run-key-bytes); given for a run already issued, sets only its budget, applied at its next journal")
	}
	sub("revoke NAME", "Revoke the "+kind.use+" identity NAME", cobra.ExactArgs(1), func(cmd *cobra.Command, dir string, args []string) error {
		if err := kind.revoke(dir, args[0]); err != nil {
			return engineErr("", err, cluster.ErrConfig, cluster.ErrNotFound)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
		return nil
	})
	sub("ls", "List the "+kind.use+" identities issued", cobra.NoArgs, func(cmd *cobra.Command, dir string, _ []string) error {
		names, keys, err := kind.issued(dir)
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
