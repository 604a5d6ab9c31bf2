package main

import (
	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/spf13/cobra"
)

func newNATSProvision() *cobra.Command {
	cfg := cluster.DefaultAgent()
	cfg.Creds = natsCreds
	cmd := &cobra.Command{
		Use:     "provision",
		Short:   "Create the engine's streams, bucket and consumers on a stock nats-server, and serve workers' requests",
		Long:    help("nats-provision"),
		Example: example("nats-provision"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkEngineFlags(cmd.Flags(), &cfg.ProvisionConfig); err != nil {
				return err
			}
			err := cluster.RunAgent(cmd.Context(), cfg, cmd.OutOrStdout(), notef(cmd.ErrOrStderr(), "maker nats provision"))
			return engineErr("--nats", err, cluster.ErrConfig)
		},
	}
	fs := cmd.Flags()
	flagbind.Bind(fs, &cfg)
	fs.IntVar(&cfg.Replicas, "replicas", 1, "replicas of every stream and bucket, the runs' journals, task queues and results among them (1 for one server, 3 for a cluster of three; at most the cluster's nodes)")
	fs.BoolVar(&cfg.DurableSamples, "durable", true, "keep the job and reply streams on disk, so they survive a restart of the server")
	return cmd
}
