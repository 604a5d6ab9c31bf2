package main

import (
	"fmt"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/spf13/cobra"
)

// natsCreds is the credential of maker nats ls, rm, provision and maker
// worker before their flags (--nats-creds) set its Path: its errors name
// the flag.
var natsCreds = cluster.ClientCreds{PathName: "--nats-creds"}

// openAdmin connects as the admin (cluster.OpenAdmin).
func openAdmin(cfg cluster.AdminConfig) (*cluster.Admin, error) {
	a, err := cfg.Open()
	if err != nil {
		return nil, engineErr("--nats", err, cluster.ErrConfig)
	}
	return a, nil
}

func newNATSLs() *cobra.Command {
	var (
		cfg    = cluster.AdminConfig{URL: cluster.DefaultAdmin().URL, Creds: natsCreds}
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "ls",
		Short:   "List what runs left on the engine: journals, task queues, routes",
		Long:    help("nats-ls"),
		Example: example("nats-ls"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openAdmin(cfg)
			if err != nil {
				return err
			}
			defer a.Close()
			list, err := a.List(cmd.Context())
			if err != nil {
				return engineErr("--nats", err)
			}
			return cluster.WriteLeftovers(cmd.OutOrStdout(), list, asJSON)
		},
	}
	flagbind.Bind(cmd.Flags(), &cfg)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func newNATSRm() *cobra.Command {
	cfg := cluster.AdminConfig{URL: cluster.DefaultAdmin().URL, Creds: natsCreds}
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
			a, err := openAdmin(cfg)
			if err != nil {
				return err
			}
			defer a.Close()
			removed, missing, err := a.RemoveRuns(cmd.Context(), args)
			for _, r := range removed {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", r)
			}
			switch {
			case err != nil:
				return engineErr("--nats", err)
			case len(missing) > 0 && len(removed) > 0:
				return failed(fmt.Errorf("nothing named %q on the engine (the others were removed)", missing))
			case len(missing) > 0:
				return usageErr("nothing named %q on the engine (maker nats ls lists what is there)", missing)
			}
			return nil
		},
	}
	flagbind.Bind(cmd.Flags(), &cfg)
	return cmd
}
