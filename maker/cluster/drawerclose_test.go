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

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/tmc/langchaingo/llms"
)

// slowThief is a simulated model whose calls with no message (the
// thief's jobs; the other run's prompts are never empty) take thiefTook,
// as a real model's call for a long answer does: the thief chooses its
// prompts and options.
type slowThief struct {
	*sim.Model
	calls     *atomic.Int64
	thiefTook time.Duration
}

func (m slowThief) Identity() string { return maker.ModelIdentity(m.Model) }

func (m slowThief) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if len(msgs) == 0 {
		m.calls.Add(1)
		select {
		case <-time.After(m.thiefTook):
		case <-ctx.Done():
		}
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

func containsError(data []byte) bool {
	var r struct {
		Error string `json:"error"`
	}
	return json.Unmarshal(data, &r) == nil && r.Error != ""
}

// TestADrawerClosedMidCallHoldsNoWorkerPlace (review5's finding 1): the
// holder of one run's key, every 7.5 s, asks the engine for a Drawer,
// queues 4 jobs replying to it (each 2 s of the model: it chooses its
// prompts) and closes the Drawer 1 s later, mid-call. Each reply then
// finds no stream; the worker tried it again for noStreamWait (5 s),
// holding its place, so another run on the route waited for places at
// every step (44 s on a loaded machine, about a second undisturbed).
// Now the worker asks the agent every goneEvery whether the Drawer is
// gone, and the agent terminates the job once a look finds no consumer.
func TestADrawerClosedMidCallHoldsNoWorkerPlace(t *testing.T) {
	t.Parallel()
	const jobs, thiefTook, closeAfter, period = 4, 2 * time.Second, time.Second, 7500 * time.Millisecond
	var thiefCalls atomic.Int64
	var logs lockedBuffer
	a := newRouteAttack(t, slowThief{simModel(t, 5), &thiefCalls, thiefTook}, cluster.WorkerConfig{Inflight: 4, Logger: warnLogger(&logs)})
	subject := "mdap.jobs." + cluster.RouteToken(a.worker.Route()) + "." + a.key

	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var cycles, refused atomic.Int64
	base := time.Now().UnixNano()
	wg.Go(func() {
		for i := 0; fctx.Err() == nil; i++ {
			began := time.Now()
			name := fmt.Sprintf("dcyc%dx%d", base, i)
			m, err := a.thief.Request("mdap.engine.replies."+a.key, []byte(`{"name":"`+name+`"}`), 10*time.Second)
			if err != nil || containsError(m.Data) {
				refused.Add(1)
				time.Sleep(100 * time.Millisecond)
				continue
			}
			sum := sha256.Sum256([]byte(name))
			for j := range jobs {
				id := fmt.Sprintf("cyc%dx%d", i, j)
				job := cluster.Job{
					Version: cluster.WireVersion, ID: id, Route: a.worker.Route(),
					ReplyTo: "mdap.replies." + hex.EncodeToString(sum[:16]) + "." + id,
					Prompts: [][]cluster.Message{{}}, Samples: []cluster.Sample{{Step: i}},
				}
				data, _ := json.Marshal(job)
				pctx, cancel := context.WithTimeout(fctx, time.Second)
				_, _ = a.tjs.Publish(pctx, subject, data)
				cancel()
			}
			// The worker is calling the model for them by now: close.
			time.Sleep(closeAfter)
			_, _ = a.thief.Request("mdap.engine.replies", []byte(`{"name":"`+name+`","drop":true}`), 10*time.Second)
			cycles.Add(1)
			time.Sleep(period - time.Since(began))
		}
	})
	time.Sleep(2 * time.Second) // the thief's cycles under way

	d, remote := a.victim(t)
	a.checkVictim(t, d, remote, 15*time.Second, func(took time.Duration) {
		t.Logf("the other run took %s; the thief closed %d Drawers (%d asks refused), %d of its jobs reached the model; drawer %+v; worker %+v; the worker's warnings:\n%s",
			took, cycles.Load(), refused.Load(), thiefCalls.Load(), d.Stats(), a.worker.Stats(), logs.String())
	})
}
