package cluster_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestSampleOfAVanishedWorkerFailsInSeconds: the only worker of a route
// loses its connection while it draws a sample (its process killed: the
// server drops the connection). docs/nats.md promises such a sample
// fails within seconds (ErrNoWorker), not after the coordinator's
// Timeout (10 minutes here): the dead worker's job, waiting for a
// redelivery that no worker takes, kept the route's consumer's
// NumAckPending above zero, which the Drawer took for a worker holding
// the job. A worker that starts then draws the next sample.
func TestSampleOfAVanishedWorkerFailsInSeconds(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	model := simModel(t, 5)
	wnc, wjs := connect(t, srv.ClientURL())
	w := newWorker(t, wjs, slowSim{model, time.Hour}, cluster.WorkerConfig{AckWait: time.Second, Grace: 10 * time.Millisecond})
	ctx, stopWorker := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(ctx) }) // its connection is closed under it
	defer func() { stopWorker(); wg.Wait() }()

	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 10 * time.Minute})
	remote, err := d.Model(model.Identity())
	require.NoError(t, err)
	task, err := hanoi.New(4)
	require.NoError(t, err)
	sctx := maker.WithSampleID(context.Background(), maker.SampleID{Step: 0, Index: 1})
	done := make(chan error, 1)
	go func() {
		_, err := remote.GenerateContent(sctx, task.Messages(), llms.WithMaxTokens(750))
		done <- err
	}()
	cons, err := js.Consumer(context.Background(), cluster.JobsStream, "w-"+cluster.RouteToken(model.Identity()))
	require.NoError(t, err)
	require.Eventually(t, func() bool { // the worker holds the job
		info, err := cons.Info(context.Background())
		return err == nil && info.NumAckPending == 1
	}, 30*time.Second, 10*time.Millisecond)
	wnc.Close()
	gone := time.Now()
	select {
	case err := <-done:
		assert.True(t, errors.Is(err, cluster.ErrNoWorker), "%v", err)
		assert.Less(t, time.Since(gone), 30*time.Second)
		t.Logf("the sample failed %s after its worker vanished: %v", time.Since(gone).Round(time.Millisecond), err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the sample of a vanished worker still waits 2 minutes on")
	}

	// A worker that comes draws the next sample.
	_, w2js := connect(t, srv.ClientURL())
	runWorker(t, newWorker(t, w2js, model, cluster.WorkerConfig{AckWait: time.Second}))
	require.Eventually(t, func() bool {
		_, err := remote.GenerateContent(maker.WithSampleID(context.Background(), maker.SampleID{Step: 0, Index: 2}), task.Messages(), llms.WithMaxTokens(750))
		return err == nil
	}, time.Minute, 100*time.Millisecond, "a new worker serves the route")
}
