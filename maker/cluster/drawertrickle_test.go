package cluster_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestATricklingDrawerHoldsNoWorkerPlace (review7's finding, on
// d07a981, where a reply gave up for want of room only when none of its
// worker's replies to that Drawer had found room for roomWait). The
// holder of one run key asks the engine for a reply consumer of its own
// (its Drawer: the owner check passes), queues jobs replying there as
// fast as its bound allows, and reads that consumer one reply a second,
// each read freeing one place of the worker's room there. Under that
// rule no reply ever gave up, the Drawer was never taken for not
// reading, every other reply of the thief held its worker place until
// replyRetry (5 s) and was handed back at once, and another run on the
// route got no reply in 85 s. Now a Drawer counts as reading only when
// it took readingPace (4) of the worker's replies in the last roomWait.
func TestATricklingDrawerHoldsNoWorkerPlace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 3, cfg)
	_, wjs := connectAs(t, url, s.worker)
	const inflight = 4
	var thiefCalls atomic.Int64
	var logs lockedBuffer
	worker := newWorker(t, wjs, thiefCounted{simModel(t, 5), &thiefCalls}, cluster.WorkerConfig{Inflight: inflight, Logger: warnLogger(&logs)})
	runWorker(t, worker)
	served := "mdap.jobs." + cluster.RouteToken(worker.Route()) + "."

	thief, tjs := connectAs(t, url, s.thief)
	key := identityOf(thief)
	name := fmt.Sprintf("dthief%d", time.Now().UnixNano())
	m, err := thief.Request("mdap.engine.replies."+key, []byte(`{"name":"`+name+`"}`), 10*time.Second)
	require.NoError(t, err)
	require.NotContains(t, string(m.Data), "error")
	sum := sha256.Sum256([]byte(name))
	replyTo := "mdap.replies." + hex.EncodeToString(sum[:16]) + ".thief%d"

	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var queued, read atomic.Int64
	wg.Go(func() {
		for i := 0; fctx.Err() == nil; i++ {
			job := cluster.Job{
				Version: cluster.WireVersion, ID: fmt.Sprintf("thief%d", i), Route: worker.Route(),
				ReplyTo: fmt.Sprintf(replyTo, i),
				Prompts: [][]cluster.Message{{}}, Samples: []cluster.Sample{{Step: i}},
			}
			data, _ := json.Marshal(job)
			pctx, cancel := context.WithTimeout(fctx, time.Second)
			_, err := tjs.Publish(pctx, served+key, data)
			cancel()
			if err == nil {
				queued.Add(1)
			} else {
				time.Sleep(20 * time.Millisecond) // at its bound: wait for room
			}
		}
	})
	// The trickle: one reply a second, acknowledged (a work queue: its
	// place in the room is freed).
	wg.Go(func() {
		cons, err := tjs.Consumer(fctx, cluster.RepliesStream, name)
		if err != nil {
			t.Errorf("the thief's consumer: %v", err)
			return
		}
		for fctx.Err() == nil {
			batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
			if err == nil {
				for msg := range batch.Messages() {
					_ = msg.Ack()
					read.Add(1)
				}
			}
			select {
			case <-fctx.Done():
			case <-time.After(time.Second):
			}
		}
	})
	time.Sleep(3 * time.Second) // the thief's jobs under way, its room full

	_, vjs := connectAs(t, url, s.victim)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 20 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	start := time.Now()
	got, err := solveHanoiIn(ctx, remote, 3, cfg)
	took := time.Since(start)
	t.Logf("the other run took %s; the thief queued %d jobs, read %d replies, %d reached the model; drawer %+v; worker %+v; the worker's warnings (%d bytes):\n%.3000s",
		took, queued.Load(), read.Load(), thiefCalls.Load(), d.Stats(), worker.Stats(), len(logs.String()), logs.String())
	require.NoError(t, err)
	assert.Equal(t, wantSteps, got)
	assert.Zero(t, d.Stats().Withdrawn, "no call of the other run waited out its timeout")
	assert.Less(t, took, 15*time.Second, "the other run (7 steps; about a second undisturbed)")
}
