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
// A redelivery drops the delivery before it now (deliveries.deliver):
// the stale act is refused.
func TestAnActOnAnEarlierDeliveryIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, s := issueTenants(t, dir)
	sseed, err := cluster.AddWorker(dir, "sitter")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	logs := &lockedBuffer{}
	ackWait := 2 * time.Second
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{AckWait: ackWait}, Logger: warnLogger(logs)})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()

	wnc, wjs := connectAs(t, url, s.worker)
	honest := identityOf(wnc)
	w := newWorker(t, wjs, echoAfter{d: 3 * time.Second}, cluster.WorkerConfig{Inflight: 4})

	snc, _ := connectAs(t, url, sseed)
	sitterKey := identityOf(snc)
	id := strings.TrimPrefix(snc.Opts.InboxPrefix, "_INBOX_")
	jobs := make(chan *nats.Msg, 16)
	inbox := snc.NewInbox()
	_, err = snc.Subscribe(inbox, func(m *nats.Msg) {
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
