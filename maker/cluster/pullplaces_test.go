package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// TestAWorkerCannotTakeEveryPullPlace (review12, medium): the
// engine's agent serves at most 4096 workers' pulls at once, for every
// worker together (maxWorkRequests), and answers a pull past them at
// once "the engine is busy", with no job; it bounded none per identity.
// A worker credential's pull may name any route the engine serves and
// wait up to a minute; JetStream keeps 512 waiting pulls a route
// consumer (its MaxWaiting). So one worker identity pulling on routes
// nobody queues jobs on (its own four, its --route-quota, and those of
// the engine's other models) holds every place for as long as it likes,
// taking no job (not the known hole of a worker sitting on jobs): every
// other worker's pull is then answered "busy", and every run on the
// engine stalls. Here the engine serves 9 routes; the rogue keeps 520
// pulls on each of 8 idle ones, replacing a pull 200 ms after it ends
// (past a route's 512 waiting, at once) unless it was refused busy.
// Measured: without -race the honest worker served no job and the other
// run failed after 14 s, its calls withdrawn at their timeout; under
// -race on a loaded machine the agent, busy with the rogue's pulls (each
// a consumer info and a fetch; about 360 a second, each ending at once),
// did not make the other run's Drawer within 15 s. Now one identity has
// at most maxWorkPerKey of the places (an eighth): the other run is
// solved within 20 s (about 2 s here; a second alone).
func TestAWorkerCannotTakeEveryPullPlace(t *testing.T) {
	t.Parallel()
	a := newRouteAttack(t, simModel(t, 5), cluster.WorkerConfig{Inflight: 4}, "rogue")
	rogueSeed := a.rogues["rogue"]

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	// The engine's other models: four routes served, no job queued.
	_, ajs := connectAs(t, a.url, a.seeds.admin)
	var routes []string
	for i := range 4 {
		r := fmt.Sprintf("other-model-%d", i)
		require.NoError(t, cluster.ProvisionRoute(ctx, ajs, r, cluster.ProvisionConfig{}))
		routes = append(routes, r)
	}
	// The rogue's own four, within its route quota.
	rnc, _ := connectAs(t, a.url, rogueSeed)
	id := strings.TrimPrefix(rnc.Opts.InboxPrefix, "_INBOX_")
	key, _, _ := strings.Cut(id, ".")
	for i := range 4 {
		r := fmt.Sprintf("rogue-model-%d", i)
		body, _ := json.Marshal(map[string]any{"route": r})
		m, err := rnc.Request("mdap.engine.route."+key, body, 10*time.Second)
		require.NoError(t, err)
		require.NotContains(t, string(m.Data), `"error"`)
		routes = append(routes, r)
	}
	var busy, ended atomic.Int64
	sub, err := rnc.Subscribe(rnc.Opts.InboxPrefix+".pulls", func(m *nats.Msg) {
		if end := m.Header.Get("Mdap-End"); end != "" {
			if strings.Contains(end, "busy") {
				busy.Add(1)
			} else {
				ended.Add(1)
			}
		}
	})
	require.NoError(t, err)
	require.NoError(t, sub.SetPendingLimits(-1, -1))
	subject := "mdap.engine.work." + id + ".pull"
	pull := func(i int) {
		body, _ := json.Marshal(map[string]any{"route": routes[i%len(routes)], "n": 1, "wait": time.Minute})
		_ = rnc.PublishRequest(subject, sub.Subject, body)
	}
	// 520 pulls a route, each replaced 200 ms after it ends (past a
	// route's 512 waiting, or at the end of its minute), unless the
	// agent refused it, busy: no flood of requests.
	for i := range 520 * len(routes) {
		pull(i)
	}
	wg.Go(func() {
		var sent int64
		for i := 0; ctx.Err() == nil; {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			for n := ended.Load(); sent < n; sent++ {
				pull(i)
				i++
			}
		}
	})
	time.Sleep(2 * time.Second)
	t0, e0 := time.Now(), ended.Load()
	defer func() {
		t.Logf("pulls ended (not busy) during the run: %d in %s; busy %d", ended.Load()-e0, time.Since(t0), busy.Load())
	}()
	_, vjs := connectAs(t, a.url, a.seeds.victim)
	dctx, dcancel := context.WithTimeout(ctx, 15*time.Second)
	defer dcancel()
	d, err := cluster.NewDrawer(dctx, vjs, cluster.DrawerConfig{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("the other run's Drawer was not made beside a worker holding the pull places (%d of its pulls answered busy): %v", busy.Load(), err)
	}
	defer func() { _ = d.Close() }()
	remote, err := d.Model(a.worker.Route())
	require.NoError(t, err)
	a.checkVictim(t, d, remote, 20*time.Second, func(took time.Duration) {
		t.Logf("the other run took %s beside a worker holding the pull places (%d of its pulls answered busy); drawer %+v; honest worker %+v", took, busy.Load(), d.Stats(), a.worker.Stats())
	})
}
