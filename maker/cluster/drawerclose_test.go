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
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
// finds no stream; the worker tried it again for replyRetry (5 s),
// holding its place, so another run on the route waited for places at
// every step (44 s on a loaded machine, about a second undisturbed).
// Now the worker asks the agent every goneEvery whether the Drawer is
// gone, and the agent terminates the job once a look finds no consumer.
func TestADrawerClosedMidCallHoldsNoWorkerPlace(t *testing.T) {
	t.Parallel()
	closingDrawersScenario(t, churn{goroutines: 1, jobs: 4, thiefTook: 2 * time.Second, closeAfter: time.Second, period: 7500 * time.Millisecond})
}

// churn is how a thief cycles its Drawers: goroutines each opening a
// Drawer, queueing jobs to it, closing it closeAfter later, once a period
// at most; its jobs take thiefTook of the model.
type churn struct {
	goroutines, jobs              int
	thiefTook, closeAfter, period time.Duration
}

func closingDrawersScenario(t *testing.T, c churn) {
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
	worker := newWorker(t, wjs, slowThief{simModel(t, 5), &thiefCalls, c.thiefTook},
		cluster.WorkerConfig{Inflight: inflight, Logger: warnLogger(&logs)})
	runWorker(t, worker)
	served := "mdap.jobs." + cluster.RouteToken(worker.Route()) + "."
	thief, tjs := connectAs(t, url, s.thief)
	key := identityOf(thief)

	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var cycles, refused atomic.Int64
	base := time.Now().UnixNano()
	for g := range c.goroutines {
		wg.Go(func() {
			for i := 0; fctx.Err() == nil; i++ {
				began := time.Now()
				name := fmt.Sprintf("dcyc%dg%dx%d", base, g, i)
				m, err := thief.Request("mdap.engine.replies."+key, []byte(`{"name":"`+name+`"}`), 10*time.Second)
				if err != nil || containsError(m.Data) {
					refused.Add(1)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				sum := sha256.Sum256([]byte(name))
				for j := range c.jobs {
					id := fmt.Sprintf("cyc%dg%dx%d", i, g, j)
					job := cluster.Job{
						Version: cluster.WireVersion, ID: id, Route: worker.Route(),
						ReplyTo: "mdap.replies." + hex.EncodeToString(sum[:16]) + "." + id,
						Prompts: [][]cluster.Message{{}}, Samples: []cluster.Sample{{Step: i}},
					}
					data, _ := json.Marshal(job)
					pctx, cancel := context.WithTimeout(fctx, time.Second)
					_, _ = tjs.Publish(pctx, served+key, data)
					cancel()
				}
				// The worker is calling the model for them by now: close.
				time.Sleep(c.closeAfter)
				_, _ = thief.Request("mdap.engine.replies", []byte(`{"name":"`+name+`","drop":true}`), 10*time.Second)
				cycles.Add(1)
				time.Sleep(c.period - time.Since(began))
			}
		})
	}
	time.Sleep(2 * time.Second) // the thief's cycles under way

	_, vjs := connectAs(t, url, s.victim)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 20 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	got, err := solveHanoiIn(ctx, remote, 3, cfg)
	took := time.Since(start)
	t.Logf("the other run took %s; the thief closed %d Drawers (%d asks refused), %d of its jobs reached the model; drawer %+v; worker %+v; the worker's warnings:\n%s",
		took, cycles.Load(), refused.Load(), thiefCalls.Load(), d.Stats(), worker.Stats(), logs.String())
	require.NoError(t, err)
	assert.Equal(t, wantSteps, got)
	assert.Zero(t, d.Stats().Withdrawn, "no call of the other run waited out its timeout")
	assert.Less(t, took, 15*time.Second, "the other run (7 steps; about a second undisturbed)")
}
