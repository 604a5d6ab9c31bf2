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
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// routeAttack is the stage of one run key's attacks on a route: an
// engine with roles (the tenants of issueTenants), one worker serving
// the route, the thief's run key connected, and the steps an undisturbed
// run of the other tenant's (the victim's) 3-disk Hanoi decides.
type routeAttack struct {
	dir       string // the engine's credentials folder
	seeds     tenantSeeds
	url       string
	worker    *cluster.Worker
	wnc       *nats.Conn // the worker's connection
	thief     *nats.Conn
	tjs       jetstream.JetStream
	key       string // the thief's identity, which its job subjects name
	cfg       vote.Config
	wantSteps []step
	rogues    map[string]string // the seed of each worker identity named to newRouteAttack
}

// newRouteAttack stages an attack on a route served by one worker of
// model m and settings wcfg; rogues are worker identities issued beside
// it (their seeds in a.rogues), for attacks by a worker credential.
func newRouteAttack(t *testing.T, m llms.Model, wcfg cluster.WorkerConfig, rogues ...string) *routeAttack {
	t.Helper()
	return newRouteAttackWith(t, cluster.ProvisionConfig{}, m, wcfg, rogues...)
}

// newRouteAttackWith is newRouteAttack on an engine provisioned with
// pcfg (a short AckWait, say).
func newRouteAttackWith(t *testing.T, pcfg cluster.ProvisionConfig, m llms.Model, wcfg cluster.WorkerConfig, rogues ...string) *routeAttack {
	t.Helper()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	seeds := map[string]string{}
	for _, name := range rogues {
		seed, err := cluster.AddWorker(dir, name)
		require.NoError(t, err)
		seeds[name] = seed
	}
	if len(rogues) > 0 {
		var err error
		keys, _, err = cluster.EnsureCredentials(dir)
		require.NoError(t, err)
	}
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, Provision: pcfg})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	a := &routeAttack{dir: dir, seeds: s, url: srv.ClientURL(), cfg: vote.Config{K: 3, Parallel: 3}, rogues: seeds}
	_, a.wantSteps = solveHanoi(t, simModel(t, 5), 3, a.cfg)
	var wjs jetstream.JetStream
	a.wnc, wjs = connectAs(t, a.url, s.worker)
	a.worker = newWorker(t, wjs, m, wcfg)
	runWorker(t, a.worker)
	a.thief, a.tjs = connectAs(t, a.url, s.thief)
	a.key = identityOf(a.thief)
	return a
}

// ownDrawer has the engine make the thief a Drawer of its own: its
// reply consumer's name and its token.
func (a *routeAttack) ownDrawer(t *testing.T) (name, token string) {
	t.Helper()
	name = fmt.Sprintf("dthief%d", time.Now().UnixNano())
	m, err := a.thief.Request("mdap.engine.replies."+a.key, []byte(`{"name":"`+name+`"}`), 10*time.Second)
	require.NoError(t, err)
	require.NotContains(t, string(m.Data), "error")
	sum := sha256.Sum256([]byte(name))
	return name, hex.EncodeToString(sum[:16])
}

// flood queues the thief's jobs on the route as fast as its bound of
// jobs allows, the i-th replying to replyTo(i), until the test ends; it
// returns the count of jobs queued.
func (a *routeAttack) flood(t *testing.T, replyTo func(i int) string) *atomic.Int64 {
	subject := "mdap.jobs." + cluster.RouteToken(a.worker.Route()) + "." + a.key
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	var queued atomic.Int64
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			job := cluster.Job{
				Version: cluster.WireVersion, ID: fmt.Sprintf("thief%d", i), Route: a.worker.Route(),
				ReplyTo: replyTo(i),
				Prompts: [][]cluster.Message{{}}, Samples: []cluster.Sample{{Step: i}},
			}
			data, err := json.Marshal(job)
			if err != nil {
				return
			}
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err = a.tjs.Publish(pctx, subject, data)
			cancel()
			if err == nil {
				queued.Add(1)
			} else {
				time.Sleep(20 * time.Millisecond) // at its bound: wait for room
			}
		}
	})
	return &queued
}

// victim is the other run's Drawer (a call times out after 20 s) and
// its model of the route.
func (a *routeAttack) victim(t *testing.T) (*cluster.Drawer, llms.Model) {
	t.Helper()
	_, vjs := connectAs(t, a.url, a.seeds.victim)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 20 * time.Second})
	remote, err := d.Model(a.worker.Route())
	require.NoError(t, err)
	return d, remote
}

// checkVictim solves the other run through d's remote and requires an
// undisturbed run's steps, no call withdrawn, within bound (about a
// second undisturbed); report logs what the test saw, first.
func (a *routeAttack) checkVictim(t *testing.T, d *cluster.Drawer, remote llms.Model, bound time.Duration, report func(took time.Duration)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	start := time.Now()
	got, err := solveHanoiIn(ctx, remote, 3, a.cfg)
	took := time.Since(start)
	report(took)
	require.NoError(t, err)
	assert.Equal(t, a.wantSteps, got)
	assert.Zero(t, d.Stats().Withdrawn, "no call of the other run waited out its timeout")
	assert.Less(t, took, bound, "the other run (7 steps; about a second undisturbed)")
}
