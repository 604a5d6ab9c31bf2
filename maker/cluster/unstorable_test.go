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

// TestJobsWithUnstorableRepliesSlowNoOtherRun: review3. The holder of one
// run's key queues jobs on a served route, within its bound of jobs, as
// fast as it may, each well formed but with a reply the engine will not
// store:
//   - to a Drawer of its own invention (mdap.replies.<32 hex>.<job>): no
//     stream takes it. The agent terminates such a job before any worker
//     sees it: no model call for it at all.
//   - on a subject no worker may publish on: no Drawer's, so the agent
//     terminates it too (a worker would refuse it, decodeJob).
//   - to its own Drawer, which it never reads: the worker's room there
//     (ReplyKeep, 4) fills; the next replies wait roomWait (2 s) for room,
//     then the worker hands back that Drawer's jobs before their model
//     call for notReadingFor (10 s). So at most ReplyKeep + Inflight of
//     its jobs reach the model per 10 s.
//
// Beside it another run on the same route is an undisturbed run, none of
// its calls waiting out its timeout. (Before, each delivery held a worker
// place 5 s, up to 10 deliveries a job, and the other run got no reply
// within 20 s.)
func TestJobsWithUnstorableRepliesSlowNoOtherRun(t *testing.T) {
	t.Parallel()
	for name, replyTo := range map[string]string{
		"invented drawer":   "mdap.replies.%032x.thief%d",
		"forbidden subject": "mdap.nowhere%d.thief%d",
		"own unread drawer": "",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			unstorableRepliesScenario(t, replyTo)
		})
	}
}

// thiefCounted is a simulated model that counts its calls with no
// message: the thief's jobs (the other run's prompts are never empty).
type thiefCounted struct {
	*sim.Model
	thief *atomic.Int64
}

func (m thiefCounted) Identity() string { return maker.ModelIdentity(m.Model) }

func (m thiefCounted) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if len(msgs) == 0 {
		m.thief.Add(1)
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

func unstorableRepliesScenario(t *testing.T, replyTo string) {
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
	worker := newWorker(t, wjs, thiefCounted{simModel(t, 5), &thiefCalls}, cluster.WorkerConfig{Inflight: inflight})
	runWorker(t, worker)
	served := "mdap.jobs." + cluster.RouteToken(worker.Route()) + "."
	thief, tjs := connectAs(t, url, s.thief)
	key := identityOf(thief)
	own := replyTo == ""
	if own {
		name := fmt.Sprintf("dthief%d", time.Now().UnixNano())
		m, err := thief.Request("mdap.engine.replies."+key, []byte(`{"name":"`+name+`"}`), 10*time.Second)
		require.NoError(t, err)
		require.NotContains(t, string(m.Data), "error")
		sum := sha256.Sum256([]byte(name))
		replyTo = "mdap.replies." + hex.EncodeToString(sum[:16]) + ".thief%[2]d"
	}

	began := time.Now()
	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var queued atomic.Int64
	wg.Go(func() {
		for i := 0; fctx.Err() == nil; i++ {
			job := cluster.Job{
				Version: cluster.WireVersion, ID: fmt.Sprintf("thief%d", i), Route: worker.Route(),
				ReplyTo: fmt.Sprintf(replyTo, i+1, i),
				Prompts: [][]cluster.Message{{}}, Samples: []cluster.Sample{{Step: i}},
			}
			data, err := json.Marshal(job)
			if err != nil {
				return
			}
			pctx, cancel := context.WithTimeout(fctx, time.Second)
			_, err = tjs.Publish(pctx, served+key, data)
			cancel()
			if err == nil {
				queued.Add(1)
			} else {
				time.Sleep(20 * time.Millisecond) // at its bound: wait for room
			}
		}
	})
	time.Sleep(time.Second) // the thief's jobs queued first

	_, vjs := connectAs(t, url, s.victim)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 20 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	got, err := solveHanoiIn(ctx, remote, 3, cfg)
	took := time.Since(start)
	calls, elapsed := thiefCalls.Load(), time.Since(began)
	t.Logf("the other run took %s; the thief queued %d jobs, %d reached the model in %s; drawer %+v; worker %+v",
		took, queued.Load(), calls, elapsed, d.Stats(), worker.Stats())
	require.NoError(t, err)
	assert.Equal(t, wantSteps, got)
	assert.Zero(t, d.Stats().Withdrawn, "no call of the other run waited out its timeout")
	assert.Less(t, took, 20*time.Second, "the other run (7 steps; about a second undisturbed) within one timeout")
	if !own {
		assert.Zero(t, calls, "no job of the thief reached the model")
		return
	}
	const replyKeep, notReadingFor = 4, 10 * time.Second // the engine's and the worker's
	periods := 1 + int64(elapsed/notReadingFor)
	assert.LessOrEqual(t, calls, replyKeep+inflight*periods,
		"the thief's jobs that reached the model: its room's worth, then a place each per %s", notReadingFor)
}
