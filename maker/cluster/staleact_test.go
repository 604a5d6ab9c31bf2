package cluster_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// echoAfter answers every prompt with its text after d.
type echoAfter struct{ d time.Duration }

func (echoAfter) Identity() string { return "echo-after" }

func (m echoAfter) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func (m echoAfter) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(m.d):
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: sim.PromptText(msgs), StopReason: "stop"}}}, nil
}

// TestAnActOnAnEarlierDeliveryIsRefused (review18, medium-high): the
// sitter takes a job and sits on it until its ack wait passes; the engine
// redelivers it to the honest worker. The agent kept the sitter's
// delivery (a.work.held is pruned only after 2 ack waits and a minute),
// so the sitter's NAK on its old handle was accepted, and JetStream
// (processNak checks that the stream sequence is pending, not that this
// is its current delivery) handed the job back while the honest worker
// held it: the agent delivered it again, struck the honest worker's room
// ("let a job time out"), and the honest worker called the model twice.
// A redelivery supersedes the delivery before it now
// (deliveries.deliver), and a hand-back past its ack wait is done
// nowhere (held.lapsed): the stale act is refused.
func TestAnActOnAnEarlierDeliveryIsRefused(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	url, s, sseed := tenantsAndAWorkerOn(t, cluster.ServerConfig{Provision: cluster.ProvisionConfig{AckWait: 2 * time.Second}, Logger: warnLogger(logs)})

	wnc, wjs := connectAs(t, url, s.worker)
	honest := identityOf(wnc)
	w := newWorker(t, wjs, echoAfter{d: 3 * time.Second}, cluster.WorkerConfig{Inflight: 4})

	snc, _ := connectAs(t, url, sseed)
	sitterKey := identityOf(snc)
	id := strings.TrimPrefix(snc.Opts.InboxPrefix, "_INBOX_")
	jobs := make(chan *nats.Msg, 16)
	inbox := snc.NewInbox()
	_, err := snc.Subscribe(inbox, func(m *nats.Msg) {
		if m.Header.Get("Mdap-Handle") != "" {
			jobs <- m
		}
	})
	require.NoError(t, err)
	req, _ := json.Marshal(map[string]any{"route": w.Route(), "n": 1, "wait": 30 * time.Second})
	require.NoError(t, snc.PublishRequest("mdap.engine.work."+id+".pull", inbox, req))
	time.Sleep(300 * time.Millisecond)

	_, vjs := connectAs(t, url, s.victim)
	dlogs := &lockedBuffer{}
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 20 * time.Second, Logger: warnLogger(dlogs)})
	remote, err := d.Model(w.Route())
	require.NoError(t, err)
	var answered atomic.Value
	done := make(chan struct{})
	go func() {
		defer close(done)
		out, err := remote.Call(context.Background(), "hello")
		answered.Store([2]any{out, err})
	}()

	var job *nats.Msg
	select {
	case job = <-jobs:
	case <-time.After(10 * time.Second):
		t.Fatal("the sitter was sent no job")
	}
	handle := job.Header.Get("Mdap-Handle")
	t.Logf("sitter %s holds the job as %s", sitterKey[:12], handle)
	runWorker(t, w) // the honest worker starts only now: the job is the sitter's

	// Wait for the redelivery to the honest worker.
	deadline := time.Now().Add(15 * time.Second)
	for w.Stats().Redelivered == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.Positive(t, w.Stats().Redelivered, "the job came to the honest worker after the sitter's ack wait")
	time.Sleep(500 * time.Millisecond) // the honest worker is mid-call (3 s)

	act, _ := json.Marshal(map[string]any{"handle": handle, "op": "nak"})
	ans, err := snc.Request("mdap.engine.work."+id+".ack", act, 5*time.Second)
	require.NoError(t, err)
	t.Logf("the agent's answer to the sitter's stale NAK: %s", ans.Data)
	assert.Contains(t, string(ans.Data), "error", "the stale act is refused")

	<-done
	time.Sleep(3 * time.Second) // let the second delivery finish
	t.Logf("call: %v; honest worker %+v; drawer %+v", answered.Load(), w.Stats(), d.Stats())
	t.Logf("engine warnings:\n%s", logs.String())
	t.Logf("drawer warnings:\n%s", dlogs.String())
	assert.False(t, strings.Contains(logs.String(), "let a job time out") && strings.Contains(logs.String(), honest[:12]),
		"the honest worker's room is never struck for a job it held and answered in time")
	assert.Equal(t, int64(1), w.Stats().Redelivered, "the honest worker was given the job it held once only")
}

// rawPuller pulls and acts through the agent by hand.
type rawPuller struct {
	nc   *nats.Conn
	id   string
	jobs chan *nats.Msg
}

func newRawPuller(t *testing.T, url, seed string) *rawPuller {
	nc, _ := connectAs(t, url, seed)
	p := &rawPuller{nc: nc, id: strings.TrimPrefix(nc.Opts.InboxPrefix, "_INBOX_"), jobs: make(chan *nats.Msg, 64)}
	return p
}

func (p *rawPuller) pull(t *testing.T, route string, wait time.Duration) {
	inbox := p.nc.NewInbox()
	_, err := p.nc.Subscribe(inbox, func(m *nats.Msg) {
		if m.Header.Get("Mdap-Handle") != "" {
			p.jobs <- m
		}
	})
	require.NoError(t, err)
	req, _ := json.Marshal(map[string]any{"route": route, "n": 1, "wait": wait})
	require.NoError(t, p.nc.PublishRequest("mdap.engine.work."+p.id+".pull", inbox, req))
}

// next is the next job sent to p, failing t (naming what) when none
// comes within 10 s.
func (p *rawPuller) next(t *testing.T, what string) *nats.Msg {
	t.Helper()
	select {
	case m := <-p.jobs:
		return m
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no job came", what)
		return nil
	}
}

func (p *rawPuller) act(t *testing.T, handle, op string) string {
	data, _ := json.Marshal(map[string]any{"handle": handle, "op": op})
	ans, err := p.nc.Request("mdap.engine.work."+p.id+".ack", data, 5*time.Second)
	require.NoError(t, err)
	return string(ans.Data)
}

// TestAnActOnAnEarlierDeliveryThroughAnotherAgentIsRefused (review19,
// medium-high): with two agents (a second maker nats provision), a
// redelivery fetched by the other agent left the sitter's earlier handle
// in the first agent's book, and the sitter's stale NAK (relayed between
// the agents) handed back the job its next holder worked on: review18's
// attack, open with N agents. An agent that delivers a job again tells
// the others (peerNews), which supersede their earlier delivery of it.
func TestAnActOnAnEarlierDeliveryThroughAnotherAgentIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, s := issueTenants(t, dir)
	var sseeds []string
	for i := range 8 {
		sseed, err := cluster.AddWorker(dir, "sitter"+string(rune('a'+i)))
		require.NoError(t, err)
		sseeds = append(sseeds, sseed)
	}
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	ackWait := 2 * time.Second
	engine := cluster.ProvisionConfig{AckWait: ackWait}
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, Provision: engine})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	anc, _ := connectAs(t, url, s.admin)
	actx, acancel := context.WithCancel(context.Background())
	t.Cleanup(acancel)
	second, err := cluster.ServeAgent(actx, anc, engine)
	require.NoError(t, err)
	t.Cleanup(second.Stop)

	_, wjs := connectAs(t, url, s.worker)
	w := newWorker(t, wjs, echoAfter{d: time.Second}, cluster.WorkerConfig{}) // the route only; never run
	honest := newRawPuller(t, url, s.worker)

	_, vjs := connectAs(t, url, s.victim)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 60 * time.Second, NoWorker: rawPullsOnly})
	remote, err := d.Model(w.Route())
	require.NoError(t, err)

	for round := range 8 {
		sitter := newRawPuller(t, url, sseeds[round]) // a fresh room at each agent
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _, _ = remote.Call(ctx, "hello") }()
		sitter.pull(t, w.Route(), 10*time.Second)
		first := sitter.next(t, "the sitter")
		time.Sleep(ackWait + 300*time.Millisecond)
		honest.pull(t, w.Route(), 5*time.Second)
		second := honest.next(t, "the honest puller's redelivery")
		require.Equal(t, "2", second.Header.Get("Mdap-Delivered"))
		ans := sitter.act(t, first.Header.Get("Mdap-Handle"), "nak")
		t.Logf("round %d: the stale NAK: %s", round, ans)
		if !strings.Contains(ans, "error") {
			// Accepted: the job is handed back while the honest puller
			// holds it; it comes again (a third delivery).
			honest.pull(t, w.Route(), 3*time.Second)
			select {
			case again := <-honest.jobs:
				t.Errorf("round %d: a stale NAK across agents was accepted: the job the honest worker holds came again (delivery %s)",
					round, again.Header.Get("Mdap-Delivered"))
			case <-time.After(4 * time.Second):
				t.Errorf("round %d: a stale NAK across agents was accepted", round)
			}
			cancel()
			return
		}
		_ = honest.act(t, second.Header.Get("Mdap-Handle"), "term")
		cancel()
		time.Sleep(200 * time.Millisecond)
	}
	t.Log("every redelivery went through the sitter's agent (chance 1/256)")
}

// TestALateActOnADeliveryDeliveredAgainReopensARoom (review19,
// medium-low): heldroom.go's rule that a late act on a job that timed out
// opens a room at zero to one job (rooms.late) is reached through
// Agent.act finding the delivery; when the job was delivered again, the
// first version of the fix for review18 dropped the late worker's
// delivery, and its room stayed at zero. A superseded delivery is kept
// for the book: the act reaches it, never JetStream.
func TestALateActOnADeliveryDeliveredAgainReopensARoom(t *testing.T) {
	t.Parallel()
	ackWait := 2 * time.Second
	url, s, lseed := tenantsAndAWorkerOn(t, cluster.ServerConfig{Provision: cluster.ProvisionConfig{AckWait: ackWait}})

	_, wjs := connectAs(t, url, s.worker)
	other := newWorker(t, wjs, echoAfter{d: 15 * time.Second}, cluster.WorkerConfig{Inflight: 1})
	late := newRawPuller(t, url, lseed)
	_, vjs := connectAs(t, url, s.victim)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 60 * time.Second})
	remote, err := d.Model(other.Route())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	go func() { _, _ = remote.Call(ctx, "one") }()
	late.pull(t, other.Route(), 10*time.Second)
	first := late.next(t, "the late worker")
	runWorker(t, other) // takes the job at its ack wait, and is busy with it 15 s
	require.Eventually(t, func() bool { return other.Stats().Redelivered == 1 }, 10*time.Second, 20*time.Millisecond)
	late.pull(t, other.Route(), 300*time.Millisecond) // the book strikes the late worker's room: zero
	time.Sleep(400 * time.Millisecond)
	ans := late.act(t, first.Header.Get("Mdap-Handle"), "progress") // late, under load
	t.Logf("the late progress report: %s", ans)

	go func() { _, _ = remote.Call(ctx, "two") }()
	late.pull(t, other.Route(), 1500*time.Millisecond)
	select {
	case <-late.jobs:
	case <-time.After(2 * time.Second):
		t.Error("a worker whose act came late kept no room of one (rooms.late never ran: the act was refused)")
	}
}
