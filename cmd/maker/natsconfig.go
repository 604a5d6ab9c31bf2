package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/spf13/cobra"
)

// newNATSConfig is maker nats config: the files of a cluster of stock
// nats-server nodes serving mdap's roles (cluster.WriteStockCluster).
func newNATSConfig() *cobra.Command {
	var f struct {
		cluster.StockClusterConfig
		Out   string `flag:"out" usage:"the folder to write the cluster's files to (refused when it exists and is not empty, unless --force)"`
		Force bool   `flag:"force" usage:"replace DIR whole when it exists and is not empty (its JetStream stores included)"`
	}
	cmd := &cobra.Command{
		Use:     "config --out DIR",
		Short:   "Write the configuration of a cluster of stock nats-server nodes, and its clients' credentials",
		Long:    help("nats-config"),
		Example: example("nats-config"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Out == "" {
				return usageErr("--out: name the folder to write the cluster's files to")
			}
			if err := positiveFlags(cmd.Flags(), "nodes", "workers", "base-port"); err != nil {
				return err
			}
			c, err := cluster.WriteStockCluster(f.Out, f.StockClusterConfig, f.Force) // Validate first, before any file
			switch {
			case fielderr.As(err) != nil:
				return fieldUsageErr(err, clusterFlagOf, "nats config")
			case errors.Is(err, cluster.ErrConfig):
				return usageErr("--out: %w (or give --force)", err)
			case err != nil:
				return failed(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join(c.URLs, ","))
			fmt.Fprint(cmd.ErrOrStderr(), "maker nats config: "+c.Steps())
			return nil
		},
	}
	f.StockClusterConfig = cluster.DefaultStockCluster()
	flagbind.Bind(cmd.Flags(), &f)
	return cmd
}
