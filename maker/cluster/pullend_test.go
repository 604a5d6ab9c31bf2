package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
)

// TestAJobsHeadersCannotEndAnotherRunsPull (review11): the engine's agent
// forwarded a job to its worker with every header its coordinator gave
// it, and the worker takes a message with an Mdap-End header for the end
// of its pull. So a run key whose jobs carried Mdap-End ended every pull
// its job arrived in: other runs' jobs forwarded after it in that pull
// went to an inbox nobody read, each held for the engine's ack wait
// (another run took 21 s, a call withdrawn at its 20 s timeout; about a
// second undisturbed). The agent now forwards a job's trace context only
// (forwardedHeaders): the other run has an undisturbed run's winners
// within 8 s.
func TestAJobsHeadersCannotEndAnotherRunsPull(t *testing.T) {
	t.Parallel()
	a := newRouteAttack(t, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	_, tok := a.ownDrawer(t)
	d, remote := a.victim(t)
	subject := "mdap.jobs." + cluster.RouteToken(a.worker.Route()) + "." + a.key
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var queued atomic.Int64
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			data, err := json.Marshal(cluster.Job{
				Version: cluster.WireVersion, ID: fmt.Sprintf("end%d", i), Route: a.worker.Route(),
				ReplyTo: fmt.Sprintf("mdap.replies.%s.end%d", tok, i),
				Prompts: [][]cluster.Message{{}}, Samples: []cluster.Sample{{Step: i}},
			})
			if err != nil {
				return
			}
			msg := nats.NewMsg(subject)
			msg.Data = data
			msg.Header.Set("Mdap-End", "1")
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err = a.tjs.PublishMsg(pctx, msg)
			cancel()
			if err == nil {
				queued.Add(1)
			} else {
				time.Sleep(20 * time.Millisecond) // at its bound: wait for room
			}
		}
	})
	a.checkVictim(t, d, remote, 8*time.Second, func(took time.Duration) {
		t.Logf("the other run took %s beside %d jobs ending pulls; drawer %+v; worker %+v", took, queued.Load(), d.Stats(), a.worker.Stats())
	})
}
