package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/spf13/cobra"
)

// newNATSWorker is maker nats worker: the operator's issuing and revoking
// of worker identities in the engine's credentials folder.
func newNATSWorker() *cobra.Command {
	var creds string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Issue, list and revoke worker identities (one nkey per worker)",
		Long: `worker manages worker identities in the engine's credentials folder (--creds,
default ./` + defaultCredsDir + `): each worker gets a key of its own, so that one
can be revoked without touching the others.

  add NAME      issue a key: writes workers/NAME.nk (the seed: copy it to that
                worker's machine only, and start it with --nats-creds NAME.nk)
                and workers/NAME.pub; prints the seed's path
  revoke NAME   revoke it: its files are removed; a running maker nats refuses
                the key and closes the worker's connections within a second
                (a stock nats-server: write its authorization block again and
                reload it)
  ls            list the identities issued

Names are 1 to 64 letters, digits, '-' or '_'.`,
		Example: `  maker nats worker add gpu1
  maker nats worker revoke gpu1 --creds /var/lib/mdap-nats/creds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&creds, "creds", defaultCredsDir, "the engine's credentials folder (maker nats --creds; STORE/creds by default)")
	abs := func() (string, error) {
		dir, err := filepath.Abs(creds)
		if err != nil {
			return "", usageErr("--creds %q: %v", creds, err)
		}
		return dir, nil
	}
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "Issue the worker identity NAME",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := abs()
			if err != nil {
				return err
			}
			seed, err := cluster.AddWorker(dir, args[0])
			if errors.Is(err, cluster.ErrConfig) {
				return usageErr("%w", err)
			}
			if err != nil {
				return failed(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), seed)
			fmt.Fprintf(cmd.ErrOrStderr(), "maker nats worker: issued %s; on its machine: maker worker --nats-creds %s (copy the file there only)\n", args[0], filepath.Base(seed))
			return nil
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke the worker identity NAME",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := abs()
			if err != nil {
				return err
			}
			err = cluster.RevokeWorker(dir, args[0])
			if errors.Is(err, cluster.ErrConfig) || errors.Is(err, cluster.ErrNotFound) {
				return usageErr("%w", err)
			}
			if err != nil {
				return failed(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
			return nil
		},
	}
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the worker identities issued",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := abs()
			if err != nil {
				return err
			}
			names, keys, err := cluster.IssuedWorkers(dir)
			if err != nil {
				return failed(err)
			}
			for _, n := range names {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", n, keys[n])
			}
			return nil
		},
	}
	cmd.AddCommand(add, revoke, ls)
	return cmd
}
