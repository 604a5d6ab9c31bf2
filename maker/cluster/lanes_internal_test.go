package cluster

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lane is served at most laneWidth at a time and holds at most
// laneDepth requests waiting; past that a request is refused at once,
// and another requester's lane is served meanwhile.
func TestALaneHoldsItsDepthAndServesItsWidth(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	var at, most int
	var served atomic.Int64
	var wg sync.WaitGroup
	l := lanes{wg: &wg, serve: func(m *nats.Msg) {
		served.Add(1)
		if m.Subject == agentSubject+"journal.other" {
			return
		}
		mu.Lock()
		at++
		most = max(most, at)
		mu.Unlock()
		<-release
		mu.Lock()
		at--
		mu.Unlock()
	}}
	flood := func(n int) (refused int) {
		for range n {
			if l.add(&nats.Msg{Subject: agentSubject + "journal.flood"}) != "" {
				refused++
			}
		}
		return refused
	}
	require.Zero(t, flood(laneWidth))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return at == laneWidth }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, 5, flood(laneDepth+5), "refused past the lane's depth")
	// Another requester is served while the flood's lane is stuck.
	require.Empty(t, l.add(&nats.Msg{Subject: agentSubject + "journal.other"}))
	require.Eventually(t, func() bool { return served.Load() == laneWidth+1 }, 10*time.Second, 5*time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, laneWidth, most, "served at most laneWidth at once")
	assert.EqualValues(t, laneDepth+laneWidth+1, served.Load())
	assert.Empty(t, l.byName, "an empty lane is removed")
}

// askAgent asks again after a Busy refusal, as long as its time lasts.
func TestAskAgentWaitsOutABusyLane(t *testing.T) {
	t.Parallel()
	js := testJS(t)
	nc := js.Conn()
	var asked atomic.Int64
	sub, err := nc.Subscribe(agentSubject+"journal.busy", func(m *nats.Msg) {
		if asked.Add(1) <= 2 {
			refuseBusy(m, "full")
			return
		}
		data, _ := json.Marshal(agentResponse{})
		_ = m.Respond(data)
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, askAgent(context.Background(), nc, "journal.busy", agentRequest{Name: "busy"}))
	assert.EqualValues(t, 3, asked.Load())
}

// A coordinator asks in its own identity's lane; under a stock server's
// block written before those subjects, which refuses it, it asks
// unscoped at once, not after a timeout. (The engine itself refuses a
// server still on the pre-accounts authorization block,
// TestAnOldAuthorizationBlockIsRefusedByProvisionAndTheAgent; this
// fallback is the client's, whatever block refused it.)
func TestAskOwnFallsBackUnderAnOlderAuthorizationBlock(t *testing.T) {
	t.Parallel()
	allow := func(subjects ...string) *server.SubjectPermission {
		return &server.SubjectPermission{Allow: subjects}
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, Users: []*server.User{
		{Username: "agent", Password: "a"},
		{Username: "old", Password: "o", Permissions: &server.Permissions{
			Publish: allow(agentSubject + "withdraw"), Subscribe: allow("_INBOX.>")}},
		{Username: "new", Password: "n", Permissions: &server.Permissions{
			Publish: allow(agentSubject+"withdraw", agentSubject+"withdraw.*"), Subscribe: allow("_INBOX.>")}},
	}})
	require.NoError(t, err)
	ns.Start()
	t.Cleanup(ns.Shutdown)
	require.True(t, ns.ReadyForConnections(10*time.Second))
	connect := func(user, pass string) *nats.Conn {
		nc, err := nats.Connect(ns.ClientURL(), nats.UserInfo(user, pass))
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		return nc
	}
	agent := connect("agent", "a")
	asked := make(chan string, 4)
	_, err = agent.Subscribe(agentSubject+">", func(m *nats.Msg) {
		asked <- m.Subject
		data, _ := json.Marshal(agentResponse{})
		_ = m.Respond(data)
	})
	require.NoError(t, err)
	require.NoError(t, agent.Flush())

	start := time.Now()
	require.NoError(t, askOwn(context.Background(), connect("old", "o"), "withdraw", agentRequest{Name: "j"}))
	assert.Less(t, time.Since(start), agentTimeout/2, "refused at once, not at the agent's timeout")
	assert.Equal(t, agentSubject+"withdraw", <-asked)

	require.NoError(t, askOwn(context.Background(), connect("new", "n"), "withdraw", agentRequest{Name: "j"}))
	assert.Equal(t, agentSubject+"withdraw.anonymous", <-asked, "a connection of the default inbox is named anonymous")
}

// The agent forwards a job's W3C trace context and baggage, whatever
// propagator its own process has (maker nats sets none), and none of
// the agent's own headers a coordinator may have set.
func TestTheAgentForwardsAJobsTraceContextOnly(t *testing.T) {
	t.Parallel()
	job := nats.Header{}
	job.Set("Traceparent", "00-0102030405060708090a0b0c0d0e0f10-0102030405060708-01")
	job.Set("Tracestate", "k=v")
	job.Set("Baggage", "a=b")
	job.Set(endHeader, "1")
	job.Set("Status", "503")
	job.Set(handleHeader, "forged")
	out := nats.Header{}
	forwardedHeaders(out, job)
	assert.Equal(t, nats.Header{
		"Traceparent": {"00-0102030405060708090a0b0c0d0e0f10-0102030405060708-01"},
		"Tracestate":  {"k=v"}, "Baggage": {"a=b"},
	}, out)
}
