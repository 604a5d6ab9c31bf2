package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
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
// route got no reply in 85 s. Now a reply whose room stays full past
// replyRetry gives up for want of room whatever the Drawer took, and the
// worker hands the Drawer's jobs back before their model call for
// notReadingFor (a rule of 4 replies per roomWait caught the trickle
// sooner, but took an honest Drawer whose subject was being dropped for
// not reading).
func TestATricklingDrawerHoldsNoWorkerPlace(t *testing.T) {
	t.Parallel()
	var thiefCalls atomic.Int64
	var logs lockedBuffer
	a := newRouteAttack(t, thiefCounted{simModel(t, 5), &thiefCalls}, cluster.WorkerConfig{Inflight: 4, Logger: warnLogger(&logs)})
	name, tok := a.ownDrawer(t)
	queued := a.flood(t, func(i int) string { return fmt.Sprintf("mdap.replies.%s.thief%d", tok, i) })
	// The trickle: one reply a second, acknowledged (a work queue: its
	// place in the room is freed).
	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var read atomic.Int64
	wg.Go(func() {
		cons, err := a.tjs.Consumer(fctx, cluster.RepliesStream, name)
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

	d, remote := a.victim(t)
	a.checkVictim(t, d, remote, 15*time.Second, func(took time.Duration) {
		t.Logf("the other run took %s; the thief queued %d jobs, read %d replies, %d reached the model; drawer %+v; worker %+v; the worker's warnings (%d bytes):\n%.3000s",
			took, queued.Load(), read.Load(), thiefCalls.Load(), d.Stats(), a.worker.Stats(), len(logs.String()), logs.String())
	})
}
