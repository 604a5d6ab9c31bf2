package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNATSUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hanoi", "--journal", "nats:run"}, "give --nats URL too"},
		{[]string{"hanoi", "--nats", "http://127.0.0.1:4222"}, "want nats://HOST:PORT"},
		{[]string{"hanoi", "--nats", "nats://127.0.0.1:4222", "--journal", "nats:a.b"}, "run name"},
		{[]string{"hanoi", "--nats", "nats://127.0.0.1:4222", "--base-url", "http://127.0.0.1:1/v1"}, "--base-url applies to the workers' model"},
		{[]string{"hanoi", "--nats", "nats://127.0.0.1:4222", "--latency", "1ms"}, "--latency applies to the workers' model"},
		{[]string{"worker", "--model", "sim"}, "--nats URL"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--inflight", "0"}, "--inflight 0"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--ack-wait", "100ms"}, "--ack-wait 100ms"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--k", "3"}, "unknown flag: --k"},
		{[]string{"worker", "--nats", "nats://127.0.0.1:4222", "--model", "openai:x", "--seed", "2"}, "--seed applies to --model sim only"},
		{[]string{"nats", "--addr", "nowhere"}, "--addr"},
		{[]string{"nats", "--store", ""}, "--store"},
	} {
		code, out, errOut := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errOut)
		assert.Empty(t, out, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}

func TestNATSUnreachableFails(t *testing.T) {
	for _, args := range [][]string{
		{"hanoi", "--disks", "3", "--nats", "nats://127.0.0.1:1"},
		{"worker", "--nats", "nats://127.0.0.1:1"},
	} {
		code, _, errOut := cli(t, args...)
		assert.Equal(t, 1, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, "maker nats", "%v: the message says how to start a server", args)
	}
}

// In one process: a server and a worker from the library, the CLI's
// coordinator with its journal on the engine, then a resume of the
// finished run.
func TestHanoiOverNATSWithJournalOnTheEngine(t *testing.T) {
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	nc, err := cluster.Connect(srv.ClientURL(), "worker")
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	c := sim.DefaultConfig()
	c.Seed = 1 // the flags' default
	model, err := sim.New(hanoi.Oracle{}, c)
	require.NoError(t, err)
	w, err := cluster.NewWorker(context.Background(), js, model, cluster.WorkerConfig{Inflight: 3})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, w.Run(ctx)) })
	defer func() { cancel(); wg.Wait() }()

	code, local := hanoiJSON(t, "--disks", "5")
	require.Equal(t, 0, code)
	args := []string{"--disks", "5", "--nats", srv.ClientURL(), "--journal", "nats:cli-run", "--timeout", "30s"}
	code, remote := hanoiJSON(t, args...)
	require.Equal(t, 0, code)
	assert.True(t, remote.Solved)
	assert.Equal(t, local.Valid, remote.Valid)
	assert.Equal(t, local.Flagged, remote.Flagged)
	assert.Positive(t, w.Stats().Served)

	code, _, errOut := cli(t, append([]string{"hanoi"}, args...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "journal already exists")
	start := time.Now()
	code, resumed := hanoiJSON(t, append(args, "--resume")...)
	require.Equal(t, 0, code)
	assert.Equal(t, 31, resumed.Resumed)
	assert.Less(t, time.Since(start), 5*time.Second, "a closed journal's lease is released at once")
}
