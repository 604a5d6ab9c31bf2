package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNAKStealRefused: a rogue with a worker credential NAKs every job it
// can name, on the route's consumer and through the engine (with random
// handles, and as the honest worker), all along a run (issue 35, attack
// 2): no job of the honest worker is redelivered, no reply is forged, and
// the winners are an undisturbed run's.
func TestNAKStealRefused(t *testing.T) {
	t.Parallel()
	srv, creds := startRoleServer(t)
	stealScenario(t, srv.ClientURL(), cluster.SeedFile(creds, cluster.RoleCoordinator),
		cluster.SeedFile(creds, cluster.RoleWorker), cluster.SeedFile(creds, cluster.RoleWorker))
}

func stealScenario(t *testing.T, url, coordSeed, workerSeed, rogueSeed string) {
	cfg := vote.Config{K: 3, Parallel: 3}
	// A route of its own (seed 7), apart from other scenarios' workers.
	_, wantSteps := solveHanoi(t, simModel(t, 7), 3, cfg)
	slow := sim.DefaultConfig()
	slow.Seed, slow.P, slow.FlagRate, slow.ErrorRate = 7, 0.85, 0.05, 0.01
	slow.Latency = sim.FixedLatency(30 * time.Millisecond) // jobs are held long enough to be NAKed
	model, err := sim.New(hanoi.Oracle{}, slow)
	require.NoError(t, err)
	wnc, wjs := connectAs(t, url, workerSeed)
	worker := newWorker(t, wjs, model, cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	token := cluster.RouteToken(worker.Route())
	honest := strings.TrimPrefix(wnc.Opts.InboxPrefix, "_INBOX_")

	rogue, _ := connectAs(t, url, rogueSeed)
	mine := strings.TrimPrefix(rogue.Opts.InboxPrefix, "_INBOX_")
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() {
		for ctx.Err() == nil {
			for seq := 1; seq <= 64; seq++ {
				for dc := 1; dc <= 2; dc++ {
					_ = rogue.Publish(fmt.Sprintf("$JS.ACK.%s.w-%s.%d.%d.%d.0.0", cluster.JobsStream, token, dc, seq, seq), []byte("-NAK"))
				}
			}
			for _, id := range []string{honest, mine} {
				data, _ := json.Marshal(map[string]string{"handle": nuid.Next(), "op": "nak"})
				_ = rogue.Publish("mdap.engine.work."+id+".ack", data)
			}
			_ = rogue.Flush()
			time.Sleep(5 * time.Millisecond)
		}
	})

	_, cjs := connectAs(t, url, coordSeed)
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	_, gotSteps := solveHanoi(t, remote, 3, cfg)
	assert.Equal(t, wantSteps, gotSteps)
	assert.Zero(t, worker.Stats().Redelivered, "no job of the honest worker came back")
	assert.Zero(t, d.Stats().Forged)
}
