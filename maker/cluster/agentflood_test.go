package cluster_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// TestAnAgentFloodSlowsNoOtherRun: the holder of one run's key sends the
// engine's agent requests it may send (its journal stream's,
// mdap.engine.journal.thief), 2,000 a second, without waiting for
// answers. The agent must go on serving the workers'
// pulls and other coordinators' requests: another run on the engine has
// an undisturbed run's winners within 3 s and 5 times its undisturbed
// time.
func TestAnAgentFloodSlowsNoOtherRun(t *testing.T) {
	t.Parallel()
	a := newRouteAttack(t, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	d0, remote0 := a.victim(t)
	start := time.Now()
	_, err := solveHanoiIn(context.Background(), remote0, 3, a.cfg)
	require.NoError(t, err)
	undisturbed := time.Since(start)
	require.NoError(t, d0.Close())

	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var sent atomic.Int64
	inbox := a.thief.NewRespInbox()
	sub, err := a.thief.Subscribe(inbox, func(*nats.Msg) {})
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	// 2,000 requests a second, each costing the agent a JetStream
	// request: cheap for the sender, far more than the agent could serve
	// one after another.
	const every, burst = 10 * time.Millisecond, 20
	wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for fctx.Err() == nil {
			for range burst {
				if a.thief.PublishRequest("mdap.engine.journal.thief", inbox, []byte(`{}`)) == nil {
					sent.Add(1)
				}
			}
			select {
			case <-tick.C:
			case <-fctx.Done():
			}
		}
	})
	time.Sleep(2 * time.Second) // the flood under way

	d, remote := a.victim(t)
	began := sent.Load()
	a.checkVictim(t, d, remote, 3*time.Second+5*undisturbed, func(took time.Duration) {
		t.Logf("the other run took %s (%s undisturbed); the thief sent %d requests, %d of them during the other run", took, undisturbed, sent.Load(), sent.Load()-began)
	})
}
