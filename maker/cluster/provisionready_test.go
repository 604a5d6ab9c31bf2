package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProvisionWhenReadyReturnsARefusedConfigurationAtOnce(t *testing.T) {
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := time.Now()
	err := cluster.ProvisionWhenReady(ctx, js, cluster.ProvisionConfig{Replicas: -1})
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.Less(t, time.Since(start), cluster.ProvisionAttempt, "not tried again")

	require.NoError(t, cluster.ProvisionWhenReady(ctx, js, cluster.ProvisionConfig{}))
	_, err = js.Stream(ctx, cluster.JobsStream)
	assert.NoError(t, err, "provisioned")
}

func TestStockClusterSteps(t *testing.T) {
	t.Parallel()
	c := cluster.StockCluster{Dir: "/c", Configs: []string{"/c/node1.conf", "/c/node2.conf"},
		URLs: []string{"nats://127.0.0.1:4222", "nats://127.0.0.1:4223"}, Creds: "/c/creds",
		WorkerCreds: []string{"/c/creds/worker1", "/c/creds/worker2"}}
	assert.Equal(t, `a cluster of 2 nats-server nodes in /c; start each node:
  nats-server -c /c/node1.conf
  nats-server -c /c/node2.conf
then provision it, and keep the provisioner running:
  maker nats provision --nats nats://127.0.0.1:4222,nats://127.0.0.1:4223 --nats-creds /c/creds --replicas 2
workers: maker worker --nats nats://127.0.0.1:4222,nats://127.0.0.1:4223 --nats-creds /c/creds/worker1 (worker1 to worker2)
coordinators: --nats nats://127.0.0.1:4222,nats://127.0.0.1:4223 --nats-creds /c/creds
`, c.Steps())
	c.Configs = append(c.Configs, "3", "4")
	assert.Contains(t, c.Steps(), "--replicas 3", "at most three replicas")
}
