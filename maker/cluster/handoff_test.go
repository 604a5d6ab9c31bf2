package cluster_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handoffStage is an engine with roles and a route (its worker never
// runs), a Drawer of timeout on it whose calls call makes, and the raw
// connections of a sitter and of an honest worker; vnc is the Drawer's,
// which the test may close (the Drawer is not closed at its end).
type handoffStage struct {
	url, route          string
	call                func(prompt string)
	sitter, honest, vnc *nats.Conn
	s                   tenantSeeds
}

func newHandoffStage(t *testing.T, timeout time.Duration) *handoffStage {
	t.Helper()
	url, s, sseed := tenantsAndAWorkerOn(t, cluster.ServerConfig{})
	_, wjs := connectAs(t, url, s.worker)
	route := newWorker(t, wjs, echoAfter{}, cluster.WorkerConfig{}).Route()
	vnc, vjs := connectAs(t, url, s.victim)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := cluster.NewDrawer(ctx, vjs, cluster.DrawerConfig{Timeout: timeout})
	require.NoError(t, err)
	remote, err := d.Model(route)
	require.NoError(t, err)
	e := &handoffStage{url: url, route: route, vnc: vnc, s: s}
	e.call = func(prompt string) { go func() { _, _ = remote.Call(ctx, prompt) }() }
	e.sitter, _ = connectAs(t, url, sseed)
	e.honest, _ = connectAs(t, url, s.worker)
	return e
}

// pullAll makes one pull of n jobs waiting wait through the agent, and
// returns the jobs of its answer, once its end marker came.
func pullAll(t *testing.T, nc *nats.Conn, route string, n int, wait time.Duration) []*nats.Msg {
	t.Helper()
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	req, _ := json.Marshal(map[string]any{"route": route, "n": n, "wait": wait})
	id := strings.TrimPrefix(nc.Opts.InboxPrefix, "_INBOX_")
	require.NoError(t, nc.PublishRequest("mdap.engine.work."+id+".pull", inbox, req))
	var jobs []*nats.Msg
	for {
		m, err := sub.NextMsg(wait + 5*time.Second)
		require.NoError(t, err, "the pull's end never came")
		if m.Header.Get("Mdap-End") != "" {
			return jobs
		}
		if m.Header.Get("Mdap-Handle") != "" {
			jobs = append(jobs, m)
		}
	}
}

// nakWithDelay hands a job back through the agent with a delay.
func nakWithDelay(t *testing.T, nc *nats.Conn, job *nats.Msg, delay time.Duration) {
	t.Helper()
	act, _ := json.Marshal(map[string]any{"handle": job.Header.Get("Mdap-Handle"), "op": "nak", "delay": delay})
	id := strings.TrimPrefix(nc.Opts.InboxPrefix, "_INBOX_")
	ans, err := nc.Request("mdap.engine.work."+id+".ack", act, 5*time.Second)
	require.NoError(t, err)
	require.NotContains(t, string(ans.Data), "error")
}

// sitterTakes has the sitter pull until it holds want jobs.
func (e *handoffStage) sitterTakes(t *testing.T, want int) []*nats.Msg {
	t.Helper()
	var jobs []*nats.Msg
	deadline := time.Now().Add(15 * time.Second)
	for len(jobs) < want && time.Now().Before(deadline) {
		jobs = append(jobs, pullAll(t, e.sitter, e.route, want-len(jobs), time.Second)...)
	}
	require.Len(t, jobs, want, "the sitter was sent the other run's jobs")
	return jobs
}

// TestAPullIsGivenEveryKeptJobItMayTake (review21, medium): the sitter
// hands back 4 of the other run's jobs with a minute's delay while the
// honest worker is busy; the honest worker's next pull of 4 places is
// given all 4. It was given one: forward took one kept job as it began
// and then waited for the next hand-back, so kept jobs reached a worker
// at one a pull, a second each, however many places it had.
func TestAPullIsGivenEveryKeptJobItMayTake(t *testing.T) {
	t.Parallel()
	e := newHandoffStage(t, time.Minute)
	for i := range 4 {
		e.call("hello " + string(rune('a'+i)))
	}
	for _, job := range e.sitterTakes(t, 4) {
		nakWithDelay(t, e.sitter, job, time.Minute)
	}
	got := pullAll(t, e.honest, e.route, 4, time.Second)
	t.Logf("the honest worker's pull of 4 was given %d of the 4 jobs kept for it", len(got))
	assert.Len(t, got, 4, "a pull of 4 is given the 4 kept jobs it may take")
}

// TestAPullIsSentNoMoreJobsThanItAskedFor (review21, medium-low): a pull
// of one job given a kept job at once is sent no job its fetch from
// JetStream brings after it. It was: the worker got 2 jobs for its 1
// free place and called its model on both at once.
func TestAPullIsSentNoMoreJobsThanItAskedFor(t *testing.T) {
	t.Parallel()
	e := newHandoffStage(t, time.Minute)
	e.call("first")
	nakWithDelay(t, e.sitter, e.sitterTakes(t, 1)[0], time.Minute)
	go func() {
		time.Sleep(300 * time.Millisecond)
		e.call("second")
	}()
	got := pullAll(t, e.honest, e.route, 1, 3*time.Second)
	t.Logf("the honest worker's pull of 1 was sent %d jobs", len(got))
	assert.Len(t, got, 1, "a pull of 1 is sent the kept job, and no other")
}

// TestAKeptJobPastItsTTLGoesToNoWorker (review21, low): a job's TTL is
// its Drawer's timeout, so a dead coordinator's queued jobs expire. A
// job handed back with a minute's delay whose coordinator then died
// (no withdrawal) is given to no worker past its TTL. It was given to
// the honest worker, which called its model for no one.
func TestAKeptJobPastItsTTLGoesToNoWorker(t *testing.T) {
	t.Parallel()
	ttl := 2 * time.Second
	e := newHandoffStage(t, ttl)
	e.call("hello")
	nakWithDelay(t, e.sitter, e.sitterTakes(t, 1)[0], time.Minute)
	e.vnc.Close() // the coordinator dies: no withdrawal
	time.Sleep(ttl + 2*time.Second)
	_, ajs := connectAs(t, e.url, e.s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := ajs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	require.Zero(t, info.State.Msgs, "the job left the queue at its TTL")
	got := pullAll(t, e.honest, e.route, 1, time.Second)
	assert.Empty(t, got, "a job past its TTL, its coordinator gone, is sent to no worker")
}
