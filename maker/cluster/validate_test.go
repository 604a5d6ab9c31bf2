package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigsValidateThemselves: ProvisionConfig and WorkerConfig refuse
// a field out of range with a maker.FieldError naming the field, its
// value and the fix (the CLI maps the field to its flag); zero, every
// field's default, and values in range pass. NewWorker refuses what
// Validate refuses, before it touches the engine.
func TestConfigsValidateThemselves(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err          error
		field, fixed string
	}{
		{cluster.ProvisionConfig{Replicas: 6}.Validate(), "Replicas", "use 1 to 5"},
		{cluster.ProvisionConfig{AckWait: -time.Second}.Validate(), "AckWait", "use 1s to 1h"},
		{cluster.ProvisionConfig{AckWait: 100 * time.Millisecond}.Validate(), "AckWait", "use 1s to 1h"},
		{cluster.ProvisionConfig{AckWait: 2 * time.Hour}.Validate(), "AckWait", "use 1s to 1h"},
		{cluster.ProvisionConfig{MaxDeliver: 1}.Validate(), "MaxDeliver", "use at least 2"},
		{cluster.ProvisionConfig{MaxDeliver: -3}.Validate(), "MaxDeliver", "use at least 2"},
		{cluster.ProvisionConfig{LeaseTTL: -1}.Validate(), "LeaseTTL", "positive"},
		{cluster.ProvisionConfig{RunBytes: -1}.Validate(), "RunBytes", "positive"},
		{cluster.ProvisionConfig{RunLines: -1}.Validate(), "RunLines", "positive"},
		{cluster.ProvisionConfig{SampleBytes: -1}.Validate(), "SampleBytes", "positive"},
		{cluster.ProvisionConfig{MaxDrawers: -1}.Validate(), "MaxDrawers", "use 1 to 4096"},
		{cluster.ProvisionConfig{DrawerEvery: -time.Second}.Validate(), "DrawerEvery", "use 1ms to 1h"},
		{cluster.ProvisionConfig{DrawerEvery: time.Microsecond}.Validate(), "DrawerEvery", "use 1ms to 1h"},
		{cluster.ProvisionConfig{DrawerEvery: 2 * time.Hour}.Validate(), "DrawerEvery", "use 1ms to 1h"},
		{cluster.ProvisionConfig{ReplyKeep: -1}.Validate(), "ReplyKeep", "positive"},
		{cluster.ProvisionConfig{ReplyBytes: 2 << 20}.Validate(), "ReplyBytes", "NATS's largest message"},
		{cluster.ProvisionConfig{MaxDrawers: 200}.Validate(), "MaxDrawers", "less than one reply a Drawer"},
		{cluster.WorkerConfig{Inflight: cluster.MaxInflight + 1}.Validate(), "Inflight", "use 1 to 4096"},
		{cluster.WorkerConfig{Inflight: -1}.Validate(), "Inflight", "use 1 to 4096"},
		{cluster.WorkerConfig{AckWait: 100 * time.Millisecond}.Validate(), "AckWait", "use at least 1s"},
		{cluster.WorkerConfig{MaxDeliver: -1}.Validate(), "MaxDeliver", "use a positive count"},
		{cluster.WorkerConfig{Grace: -time.Second}.Validate(), "Grace", "use 0 or a positive"},
		{cluster.WorkerConfig{Replicas: 9}.Validate(), "Replicas", "use 1 to 5"},
		{cluster.WorkerConfig{URL: "http://127.0.0.1:4222"}.Validate(), "URL", "want nats://HOST:PORT"},
		{cluster.WorkerConfig{Creds: cluster.ClientCreds{Identity: "a.b"}}.Validate(), "Creds.Identity", "1 to 64 letters"},
	} {
		require.ErrorIs(t, c.err, cluster.ErrConfig, c.field)
		var fe *maker.FieldError
		require.ErrorAs(t, c.err, &fe, c.field)
		require.Len(t, fe.Fields, 1)
		assert.Equal(t, c.field, fe.Fields[0].Name)
		assert.Contains(t, fe.Remedy(), c.fixed, c.field)
	}
	assert.NoError(t, cluster.ProvisionConfig{}.Validate(), "zero is the defaults")
	assert.NoError(t, cluster.ProvisionConfig{Replicas: 5, AckWait: time.Hour, MaxDeliver: 2, DrawerEvery: time.Hour}.Validate())
	assert.NoError(t, cluster.ProvisionConfig{DrawerEvery: time.Millisecond}.Validate())
	assert.NoError(t, cluster.WorkerConfig{}.Validate(), "zero is the defaults")
	assert.NoError(t, cluster.WorkerConfig{Inflight: cluster.MaxInflight, AckWait: time.Second, MaxDeliver: 2, Grace: time.Nanosecond,
		URL: "nats://a:1,nats://b:2", Creds: cluster.ClientCreds{Identity: "w-1"}}.Validate())

	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	_, err := cluster.NewWorker(context.Background(), js, simModel(t, 1), cluster.WorkerConfig{Inflight: cluster.MaxInflight + 1})
	var fe *maker.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Inflight", fe.Fields[0].Name)
	require.ErrorIs(t, cluster.Provision(context.Background(), js, cluster.ProvisionConfig{MaxDeliver: 1}), cluster.ErrConfig)
}

// TestEmbeddedServerIsOneReplica: the embedded server is a single node, so
// a Provision asking for more replicas is refused at the start, naming
// the way to replicas (a cluster of stock nodes).
func TestEmbeddedServerIsOneReplica(t *testing.T) {
	t.Parallel()
	keys, _, err := cluster.EnsureCredentials(t.TempDir())
	require.NoError(t, err)
	_, err = cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, Provision: cluster.ProvisionConfig{Replicas: 3}})
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.Contains(t, err.Error(), "single node")
	assert.Contains(t, err.Error(), "maker nats provision --replicas 3")
}
