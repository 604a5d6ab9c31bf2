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

// A trickle: the holder of one run key asks the engine for Drawers of
// its own (the owner check passes), queues jobs replying to them in turn
// as fast as its bound of jobs allows, and reads each one reply a second,
// each read freeing one place of the worker's room there. While a reply
// waiting for room held its worker place, no rule on the Drawer's pace
// told such a Drawer from an honest far one: review7 (one Drawer, a
// worker of 4 places: the other run got no reply in 85 s), review8 (its
// 8 Drawers: 49.5 s; one Drawer against a worker of one place, maker
// worker's default: no reply in 86 s). A reply now waits for room
// parked, holding no place, and a key whose parked replies fill its
// parking has its jobs handed back before their model call (parked.go).

// TestATricklingDrawerHoldsNoWorkerPlace: one trickling Drawer, a worker
// of 4 places.
func TestATricklingDrawerHoldsNoWorkerPlace(t *testing.T) {
	t.Parallel()
	trickle(t, 1, 4)
}

// TestTricklingDrawersHoldNoWorkerPlace: the key's quota of Drawers (8),
// each trickling.
func TestTricklingDrawersHoldNoWorkerPlace(t *testing.T) {
	t.Parallel()
	trickle(t, 8, 4)
}

// TestATricklingDrawerHoldsNoPlaceOfAOnePlaceWorker: one trickling
// Drawer and a worker of one place, where no two replies compete for the
// room, so none waits long.
func TestATricklingDrawerHoldsNoPlaceOfAOnePlaceWorker(t *testing.T) {
	t.Parallel()
	trickle(t, 1, 1)
}

// trickle runs the attack with n Drawers against a worker of inflight
// places, and checks another run on the route within 15 s (about a
// second undisturbed).
func trickle(t *testing.T, n, inflight int) {
	var thiefCalls atomic.Int64
	var logs lockedBuffer
	a := newRouteAttack(t, thiefCounted{simModel(t, 5), &thiefCalls}, cluster.WorkerConfig{Inflight: inflight, Logger: warnLogger(&logs)})
	names, toks := make([]string, n), make([]string, n)
	for i := range n {
		names[i], toks[i] = a.ownDrawer(t)
	}
	queued := a.flood(t, func(i int) string { return fmt.Sprintf("mdap.replies.%s.thief%d", toks[i%n], i) })
	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var read atomic.Int64
	for _, name := range names {
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
						_ = msg.Ack() // a work queue: its place in the room is freed
						read.Add(1)
					}
				}
				select {
				case <-fctx.Done():
				case <-time.After(time.Second):
				}
			}
		})
	}
	time.Sleep(3 * time.Second) // the thief's jobs under way, its rooms full

	d, remote := a.victim(t)
	a.checkVictim(t, d, remote, 15*time.Second, func(took time.Duration) {
		t.Logf("%d Drawers read a reply a second, a worker of %d places: the other run took %s; the thief queued %d jobs, read %d replies, %d reached the model; drawer %+v; worker %+v; the worker's warnings (%d bytes):\n%.2000s",
			n, inflight, took, queued.Load(), read.Load(), thiefCalls.Load(), d.Stats(), a.worker.Stats(), len(logs.String()), logs.String())
	})
}
