package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/spf13/cobra"
)

func newNATSProvision() *cobra.Command {
	var (
		n      natsAdmin
		engine = cluster.DefaultProvision()
		routes []string
		once   bool
	)
	cmd := &cobra.Command{
		Use:     "provision",
		Short:   "Create the engine's streams, bucket and consumers on a stock nats-server, and serve workers' requests",
		Long:    help("nats-provision"),
		Example: example("nats-provision"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkEngineFlags(cmd.Flags(), &engine); err != nil {
				return err
			}
			for _, r := range routes {
				if r == "" {
					return usageErr("--route \"\": name the model the workers serve (maker worker prints it)")
				}
			}
			if dir, _ := n.creds.Resolve(); dir != "" {
				if st, err := os.Stat(dir); err == nil && st.IsDir() {
					// The run keys' budgets (maker nats run add RUN --bytes).
					engine.RunKeyBytesOf = cluster.RunKeyBytesIn(dir)
				}
			}
			a, err := n.open()
			if err != nil {
				return err
			}
			defer a.Close()
			nc, js := a.Conn()
			ctx, cancel := context.WithTimeout(cmd.Context(), setupTimeout)
			defer cancel()
			if err := cluster.ProvisionWhenReady(ctx, js, engine); err != nil {
				return engineErr("--nats", err, cluster.ErrConfig)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "provisioned the streams %s, %s, %s, %s and the buckets %s, %s (%d replicas)\n", cluster.JobsStream, cluster.RepliesStream, cluster.JournalsStream, cluster.TasksStream, cluster.LeaseBucket, cluster.ResultsBucket, engine.Replicas)
			for _, r := range routes {
				if err := cluster.ProvisionRoute(ctx, js, r, engine); err != nil {
					return failed(fmt.Errorf("--route: %w", err))
				}
				fmt.Fprintf(out, "provisioned the consumer of route %q\n", r)
			}
			if once {
				return nil
			}
			agent, err := cluster.ServeAgent(cmd.Context(), nc, engine)
			if err != nil {
				return engineErr("--nats", err)
			}
			defer agent.Stop()
			stderr := cmd.ErrOrStderr()
			fmt.Fprintf(stderr, "maker nats provision: serving workers' and coordinators' requests on %s; stop with Ctrl-C\n", n.url)
			<-cmd.Context().Done()
			fmt.Fprintln(stderr, "maker nats provision: stopping")
			return nil
		},
	}
	n.register(cmd)
	fs := cmd.Flags()
	flagbind.Bind(fs, &engine)
	fs.IntVar(&engine.Replicas, "replicas", 1, "replicas of every stream and bucket, the runs' journals, task queues and results among them (1 for one server, 3 for a cluster of three; at most the cluster's nodes)")
	fs.BoolVar(&engine.DurableSamples, "durable", true, "keep the job and reply streams on disk, so they survive a restart of the server")
	fs.StringArrayVar(&routes, "route", nil, "provision the consumer of this route now (the model the workers serve; repeatable)")
	fs.BoolVar(&once, "once", false, "provision and exit, instead of serving workers' requests")
	return cmd
}
