package main

import (
	"errors"
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
}

// newNATSWorker is maker nats worker: the operator's issuing and revoking
// of worker identities in the engine's credentials folder.
func newNATSWorker() *cobra.Command {
	return newNATSIdentities(identityKind{
		use:   "worker",
		short: "Issue, list and revoke worker identities (one nkey per worker)",
		add:   cluster.AddWorker, revoke: cluster.RevokeWorker, issued: cluster.IssuedWorkers,
		hint: "on its machine: maker worker --nats-creds %s (copy the file there only)",
	})
}

// newNATSRun is maker nats run: the operator's issuing and revoking of
// run coordinator identities (tenants: each uses its own run only).
func newNATSRun() *cobra.Command {
	return newNATSIdentities(identityKind{
		use:   "run",
		short: "Issue, list and revoke the coordinator identity of one run (a tenant)",
		add:   cluster.AddRunCoordinator, revoke: cluster.RevokeRunCoordinator, issued: cluster.IssuedRunCoordinators,
		hint: "whoever runs it: --nats-creds %s (copy the file to them only)",
	})
}

// identitiesCmd is maker nats worker or run: the kind and --creds.
type identitiesCmd struct {
	kind  identityKind
	creds string
}

// newNATSIdentities is maker nats worker or run, by kind.
func newNATSIdentities(kind identityKind) *cobra.Command {
	c := &identitiesCmd{kind: kind}
	cmd := &cobra.Command{
		Use:     kind.use,
		Short:   kind.short,
		Long:    help("nats-" + kind.use),
		Example: example("nats-" + kind.use),
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&c.creds, "creds", defaultCredsDir, "the engine's credentials folder (maker nats --creds; STORE/creds by default)")
	cmd.AddCommand(c.addCmd(), c.revokeCmd(), c.lsCmd())
	return cmd
}

// dir is --creds made absolute.
func (c *identitiesCmd) dir() (string, error) {
	dir, err := filepath.Abs(c.creds)
	if err != nil {
		return "", usageErr("--creds %q: %v", c.creds, err)
	}
	return dir, nil
}

func (c *identitiesCmd) addCmd() *cobra.Command {
	kind := c.kind
	return &cobra.Command{
		Use:   "add NAME",
		Short: "Issue the " + kind.use + " identity NAME",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := c.dir()
			if err != nil {
				return err
			}
			seed, err := kind.add(dir, args[0])
			if errors.Is(err, cluster.ErrConfig) {
				return usageErr("%w", err)
			}
			if err != nil {
				return failed(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), seed)
			fmt.Fprintf(cmd.ErrOrStderr(), "maker nats %s: issued %s; "+kind.hint+"\n", kind.use, args[0], filepath.Base(seed))
			return nil
		},
	}
}

func (c *identitiesCmd) revokeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke the " + c.kind.use + " identity NAME",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := c.dir()
			if err != nil {
				return err
			}
			err = c.kind.revoke(dir, args[0])
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
}

func (c *identitiesCmd) lsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "List the " + c.kind.use + " identities issued",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := c.dir()
			if err != nil {
				return err
			}
			names, keys, err := c.kind.issued(dir)
			if err != nil {
				return failed(err)
			}
			for _, n := range names {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", n, keys[n])
			}
			return nil
		},
	}
}
