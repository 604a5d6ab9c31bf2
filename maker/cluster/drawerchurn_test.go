package cluster_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDrawerChurnSlowsNoOtherRun (review5's finding 4): the holder of one
// run's key opens and closes Drawers as fast as its 8 goroutines may
// (each Drawer closed 150 ms after it opens, so its quota never binds),
// queueing one job to each, which the worker answers at once. Each open
// and each close made the engine rewrite MDAP_REPLIES's subjects (494
// stream updates in 17 s) and look at its consumers, and the thief's
// jobs to Drawers just made or just closed kept the agent and the worker
// busy: another run on the engine took 7 to 26 s instead of 0.35 to 1 s
// here, over a minute in a review on a loaded machine. Now the engine makes at most
// a burst of the identity's quota and then one new Drawer a second
// (ProvisionConfig.DrawerEvery), refusing the rest naming the rate: the
// other run has an undisturbed run's winners, none of its calls waiting
// out its timeout, within 3 s and 5 times its undisturbed time.
func TestDrawerChurnSlowsNoOtherRun(t *testing.T) {
	t.Parallel()
	var thiefCalls atomic.Int64
	var logs lockedBuffer
	a := newRouteAttack(t, thiefCounted{simModel(t, 5), &thiefCalls}, cluster.WorkerConfig{Inflight: 4, Logger: warnLogger(&logs)})
	// The other run undisturbed first, on this machine as loaded now.
	d0, remote0 := a.victim(t)
	start := time.Now()
	_, err := solveHanoiIn(context.Background(), remote0, 3, a.cfg)
	require.NoError(t, err)
	undisturbed := time.Since(start)
	require.NoError(t, d0.Close())
	api := countRepliesAPI(t, a)
	subject := "mdap.jobs." + cluster.RouteToken(a.worker.Route()) + "." + a.key

	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var opened, refused atomic.Int64
	var refusal atomic.Value
	began := time.Now()
	for g := range 8 {
		wg.Go(func() {
			for i := 0; fctx.Err() == nil; i++ {
				name := fmt.Sprintf("dchurn%dg%dx%d", began.UnixNano(), g, i)
				m, err := a.thief.Request("mdap.engine.replies."+a.key, []byte(`{"name":"`+name+`"}`), 10*time.Second)
				if err != nil || containsError(m.Data) {
					if err == nil {
						refusal.Store(string(m.Data))
					}
					refused.Add(1)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				opened.Add(1)
				id := fmt.Sprintf("churn%dx%d", g, i)
				job := cluster.Job{
					Version: cluster.WireVersion, ID: id, Route: a.worker.Route(),
					ReplyTo: "mdap.replies." + drawerToken(name) + "." + id,
					Prompts: [][]cluster.Message{{}}, Samples: []cluster.Sample{{Step: i}},
				}
				data, _ := json.Marshal(job)
				pctx, cancel := context.WithTimeout(fctx, time.Second)
				_, _ = a.tjs.Publish(pctx, subject, data)
				cancel()
				time.Sleep(150 * time.Millisecond)
				_, _ = a.thief.Request("mdap.engine.replies", []byte(`{"name":"`+name+`","drop":true}`), 10*time.Second)
			}
		})
	}
	time.Sleep(2 * time.Second) // the churn under way

	d, remote := a.victim(t)
	a.checkVictim(t, d, remote, 3*time.Second+5*undisturbed, func(took time.Duration) {
		t.Logf("the other run took %s (%s undisturbed); the thief opened %d Drawers in %s (%d asks refused, the last: %v), %d of its jobs reached the model; the engine's JetStream requests on %s meanwhile: %s; drawer %+v; worker %+v; the worker's warnings:\n%s",
			took, undisturbed, opened.Load(), time.Since(began).Round(time.Millisecond), refused.Load(), refusal.Load(), thiefCalls.Load(), cluster.RepliesStream, api(), d.Stats(), a.worker.Stats(), logs.String())
	})
	// The burst of its quota, then one a second (and one for the
	// second under way).
	most := int64(cluster.DefaultDrawerQuota) + int64(time.Since(began)/cluster.DefaultDrawerEvery) + 1
	assert.LessOrEqual(t, opened.Load(), most, "the thief's new Drawers")
	if s, _ := refusal.Load().(string); assert.NotEmpty(t, s, "a refusal") {
		assert.Contains(t, s, "--drawer-every")
		assert.Contains(t, s, "retry_in")
	}
}

// TestAnHonestCoordinatorWaitsOutTheDrawerRate: a run key's coordinator
// processes open and close Drawers one after another, faster than the
// engine's rate of new Drawers (a burst of the quota, 2 here, then one
// every 2 s): each NewDrawer past the burst waits for the engine's
// next Drawer and succeeds, none fails. With its bucket empty, a new
// Drawer is refused, naming the rate, and a Drawer already served is
// served again at once (a coordinator asking after a reconnection).
func TestAnHonestCoordinatorWaitsOutTheDrawerRate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed, err := cluster.AddRunCoordinator(dir, "honest")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	const every, quota, opens = 2 * time.Second, 2, 5
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{DrawerQuota: quota, DrawerEvery: every}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	_, js := connectAs(t, srv.ClientURL(), seed)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	for i := range opens {
		d, err := cluster.NewDrawer(ctx, js, cluster.DrawerConfig{})
		require.NoError(t, err, "Drawer %d", i)
		require.NoError(t, d.Close())
	}
	took := time.Since(start)
	t.Logf("%d Drawers opened and closed in %s", opens, took)
	assert.GreaterOrEqual(t, took, (opens-quota-1)*every, "the Drawers past the burst waited for the rate")

	nc := js.Conn()
	ask := func(name string) (refusal string, retryIn time.Duration) {
		m, err := nc.RequestWithContext(ctx, "mdap.engine.replies."+identityOf(nc), []byte(`{"name":"`+name+`"}`))
		require.NoError(t, err)
		var resp struct {
			Error   string        `json:"error"`
			RetryIn time.Duration `json:"retry_in"`
		}
		require.NoError(t, json.Unmarshal(m.Data, &resp))
		return resp.Error, resp.RetryIn
	}
	for refusal, in := ask("dkept"); refusal != ""; refusal, in = ask("dkept") {
		require.Positive(t, in, refusal)
		time.Sleep(in)
	}
	// The bucket is empty now: the next token comes in 2 s (long
	// enough that a loaded machine does not reach it between two asks).
	refusal, in := ask("dnext")
	assert.Contains(t, refusal, "--drawer-every", "a new Drawer past the rate")
	assert.Positive(t, in)
	refusal, _ = ask("dkept")
	assert.Empty(t, refusal, "a Drawer already served costs nothing")
}

// drawerToken is the subject token of the Drawer whose reply consumer is
// named name.
func drawerToken(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:16])
}

// countRepliesAPI counts, as the admin, the JetStream API requests on
// RepliesStream from now on (its updates, purges, consumer creations,
// deletions and lists) and returns a summary of the counts so far.
func countRepliesAPI(t *testing.T, a *routeAttack) func() string {
	t.Helper()
	nc, _ := connectAs(t, a.url, a.seeds.admin)
	var mu sync.Mutex
	counts := map[string]int{}
	sub, err := nc.Subscribe("$JS.API.>", func(m *nats.Msg) {
		if !strings.Contains(m.Subject, "."+cluster.RepliesStream) {
			return
		}
		kind := strings.TrimPrefix(m.Subject, "$JS.API.")
		kind = kind[:strings.Index(kind, "."+cluster.RepliesStream)]
		mu.Lock()
		counts[kind]++
		mu.Unlock()
	})
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprint(counts)
	}
}
