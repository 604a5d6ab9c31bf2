package cluster_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAWorkerSittingOnJobsStallsNoOtherRun (review11): a worker
// credential keeps 16 pulls of 256 jobs waiting through the engine's
// agent, on the route an honest worker of 4 places serves, and never
// answers a job it is sent. The agent bounds the jobs one identity
// holds and tightens the bound as its jobs time out (heldroom.go), so
// the sitter holds the other run's jobs for one ack wait, not at every
// delivery: the other run (a 3-disk Hanoi) has an undisturbed run's
// winners, none of its calls waiting out its timeout, within 3 s and
// twice its undisturbed time past one ack wait (the job the sitter took
// first waits it out whatever the bound), and the sitter is sent at
// most 4 jobs. Without the bound it took nearly every job of the route,
// and the other run decided one step in 25 s.
func TestAWorkerSittingOnJobsStallsNoOtherRun(t *testing.T) {
	t.Parallel()
	a := newRouteAttack(t, simModel(t, 5), cluster.WorkerConfig{Inflight: 4}, "sitter")
	sitterSeed := a.rogues["sitter"]
	d0, remote0 := a.victim(t)
	start := time.Now()
	_, err := solveHanoiIn(context.Background(), remote0, 3, a.cfg)
	require.NoError(t, err)
	undisturbed := time.Since(start)
	require.NoError(t, d0.Close())

	snc, _ := connectAs(t, a.url, sitterSeed)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	req, _ := json.Marshal(map[string]any{"route": a.worker.Route(), "n": 256, "wait": 30 * time.Second})
	subject := "mdap.engine.work." + strings.TrimPrefix(snc.Opts.InboxPrefix, "_INBOX_") + ".pull"
	var jobs atomic.Int64 // the jobs the sitter was sent
	inbox := snc.NewInbox()
	_, err = snc.Subscribe(inbox, func(m *nats.Msg) {
		if m.Header.Get("Mdap-Handle") != "" {
			jobs.Add(1)
		}
	})
	require.NoError(t, err)
	wg.Go(func() { keepPulling(ctx, snc, subject, inbox, req) })
	time.Sleep(500 * time.Millisecond)
	d, remote := a.victim(t)
	a.checkVictim(t, d, remote, 3*time.Second+2*undisturbed+cluster.DefaultAckWait, func(took time.Duration) {
		t.Logf("the other run took %s (%s undisturbed) beside a worker sitting on the %d jobs it was sent; drawer %+v; honest worker %+v", took, undisturbed, jobs.Load(), d.Stats(), a.worker.Stats())
	})
	assert.LessOrEqual(t, jobs.Load(), int64(4), "the sitter's jobs: its first round and a probe")
}

// TestAWorkerReportingProgressOnJobsItNeverAnswersLosesItsRoom: the
// sitter of TestAWorkerSittingOnJobsStallsNoOtherRun, which also
// reports progress on every job it is sent, every half second, so that
// none times out. Each job's coordinator withdraws it when its call
// times out (here 3 s), and the agent strikes a job still held an ack
// wait (here 2 s) after its withdrawal, progress or not: the sitter's
// room falls to none after its first jobs, and the other run (a 3-disk
// Hanoi) has an undisturbed run's winners. Before, progress kept every
// job it took in its room, up to 512 of them, each waiting out its
// call's timeout.
func TestAWorkerReportingProgressOnJobsItNeverAnswersLosesItsRoom(t *testing.T) {
	t.Parallel()
	const ackWait = 2 * time.Second
	a := newRouteAttackWith(t, cluster.ProvisionConfig{AckWait: ackWait}, simModel(t, 5), cluster.WorkerConfig{Inflight: 4}, "sitter")
	snc, _ := connectAs(t, a.url, a.rogues["sitter"])
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	id := strings.TrimPrefix(snc.Opts.InboxPrefix, "_INBOX_")
	req, _ := json.Marshal(map[string]any{"route": a.worker.Route(), "n": 256, "wait": 30 * time.Second})
	var mu sync.Mutex
	var handles []string // every job the sitter was sent
	inbox := snc.NewInbox()
	_, err := snc.Subscribe(inbox, func(m *nats.Msg) {
		if h := m.Header.Get("Mdap-Handle"); h != "" {
			mu.Lock()
			handles = append(handles, h)
			mu.Unlock()
		}
	})
	require.NoError(t, err)
	wg.Go(func() { keepPulling(ctx, snc, "mdap.engine.work."+id+".pull", inbox, req) })
	answers := snc.NewInbox() // the agent answers acts only under an inbox
	_, err = snc.Subscribe(answers, func(*nats.Msg) {})
	require.NoError(t, err)
	wg.Go(func() { // progress on every job it holds, twice a second
		for ctx.Err() == nil {
			mu.Lock()
			held := slices.Clone(handles)
			mu.Unlock()
			for _, h := range held {
				act, _ := json.Marshal(map[string]string{"handle": h, "op": "progress"})
				_ = snc.PublishRequest("mdap.engine.work."+id+".ack", answers, act)
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	})
	time.Sleep(500 * time.Millisecond)
	_, vjs := connectAs(t, a.url, a.seeds.victim)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 3 * time.Second})
	remote, err := d.Model(a.worker.Route())
	require.NoError(t, err)
	start := time.Now()
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := solveHanoiIn(rctx, remote, 3, a.cfg)
	took := time.Since(start)
	mu.Lock()
	sent := len(handles)
	mu.Unlock()
	t.Logf("the other run took %s beside a worker reporting progress on the %d jobs it was sent; drawer %+v; honest worker %+v", took, sent, d.Stats(), a.worker.Stats())
	require.NoError(t, err)
	assert.Equal(t, winners(a.wantSteps), winners(got))
	assert.LessOrEqual(t, sent, 6, "the sitter's jobs: its first round and a probe or two")
}

// TestASilentlyWithdrawnJobIsDroppedAtItsNextProgressReport (review13,
// medium): a coordinator that withdraws its job through the engine and
// sends no notice to the worker (or whose notice is lost) would leave an
// honest worker calling its model, and struck an ack wait later (the
// rule that closes the progress sitter's hole). The agent answers the
// worker's next progress report "withdrawn", and the worker drops the
// job then, within a third of the ack wait (its model call never ends
// by itself).
func TestASilentlyWithdrawnJobIsDroppedAtItsNextProgressReport(t *testing.T) {
	t.Parallel()
	const ackWait = 3 * time.Second
	calling := heldModel{Model: simModel(t, 5), forged: make(chan struct{})} // answers at its context's end only
	a := newRouteAttackWith(t, cluster.ProvisionConfig{AckWait: ackWait}, calling, cluster.WorkerConfig{Inflight: 1})
	_, token := a.ownDrawer(t)
	id, lease := nuid.Next(), strings.Repeat("ab", 16) // the forms of a Drawer's (the agent delivers no other)
	job := cluster.Job{
		Version: cluster.WireVersion, ID: id, Route: a.worker.Route(), ReplyTo: "mdap.replies." + token + "." + id,
		Lease: lease, Prompts: [][]cluster.Message{{}}, Samples: []cluster.Sample{{Step: 0}},
	}
	data, err := json.Marshal(job)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ack, err := a.tjs.Publish(ctx, "mdap.jobs."+cluster.RouteToken(a.worker.Route())+"."+a.key, data)
	require.NoError(t, err)
	time.Sleep(time.Second) // the worker takes it and calls its model
	withdraw, _ := json.Marshal(map[string]any{"name": id, "seq": ack.Sequence, "lease": lease})
	resp, err := a.thief.Request("mdap.engine.withdraw."+a.key, withdraw, 10*time.Second)
	require.NoError(t, err)
	require.NotContains(t, string(resp.Data), "error")
	withdrawn := time.Now()
	assert.Eventually(t, func() bool { return a.worker.Stats().Withdrawn == 1 }, ackWait/3+2*time.Second, 20*time.Millisecond,
		"dropped at the next progress report: worker %+v", a.worker.Stats())
	t.Logf("dropped %s after the silent withdrawal", time.Since(withdrawn).Round(time.Millisecond))
}

// keepPulling keeps 16 of a rogue worker's pulls (req, answered on inbox)
// waiting on subject through the engine's agent, sending 16 more every
// 5 s, until ctx ends.
func keepPulling(ctx context.Context, nc *nats.Conn, subject, inbox string, req []byte) {
	for ctx.Err() == nil {
		for range 16 {
			_ = nc.PublishRequest(subject, inbox, req)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
}
