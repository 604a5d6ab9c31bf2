package cluster_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAHandBackWithADelayStallsNoOtherRun (#35): a worker credential
// hands back every job it is sent with a delay (a NAK's, up to the
// agent's minute), or pulls skipping the other run's jobs for a minute.
// The delay is the worker's only (handoff.go): the agent gives each such
// job to the honest worker's next pull, so the other run has an
// undisturbed run's winners, no sample failing. Before, JetStream held
// each job back from every worker for the delay and then delivered it to
// the sitter's waiting pull again: with 1 s or a minute the other run
// waited to its 45 s deadline.
func TestAHandBackWithADelayStallsNoOtherRun(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]sitter{
		"nak 1s":      {op: "nak", delay: time.Second, harmless: true},
		"nak 1m":      {op: "nak", delay: time.Minute, harmless: true},
		"skip 1m":     {op: "nak", skip: time.Minute, harmless: true},
		"nak at once": {op: "nak", harmless: true},
		// With three agents, a job is kept by the agent that served the
		// hand-back, and each pull of the honest worker reaches another
		// agent two times in three (TestAJobKeptByOneAgentReachesAPullOfAnother).
		"nak 1m, three agents": {op: "nak", delay: time.Minute, harmless: true, agents: 3},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s.beside(t)
		})
	}
}

// TestAJobHandedBackByItsOnlyWorkerWaitsOutItsDelay: with no other
// worker to give it to, a job handed back with a delay comes back after
// the delay (not before: the agent renews its ack wait meanwhile, 1 s
// here), delivered a second time only, as a delayed NAK did.
func TestAJobHandedBackByItsOnlyWorkerWaitsOutItsDelay(t *testing.T) {
	t.Parallel()
	url, s, seed := tenantsAndAWorkerOn(t, cluster.ServerConfig{Provision: cluster.ProvisionConfig{AckWait: time.Second}})
	_, wjs := connectAs(t, url, s.worker)
	route := newWorker(t, wjs, echoAfter{}, cluster.WorkerConfig{}).Route() // never run: the route's consumer only
	p := newRawPuller(t, url, seed)

	_, vjs := connectAs(t, url, s.victim)
	remote, err := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 30 * time.Second, NoWorker: rawPullsOnly}).Model(route)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = remote.Call(ctx, "hello") }()

	p.pull(t, route, 10*time.Second)
	job := p.next(t, "the first delivery")
	require.Equal(t, "1", job.Header.Get("Mdap-Delivered"))
	delay := 3 * time.Second
	act, _ := json.Marshal(map[string]any{"handle": job.Header.Get("Mdap-Handle"), "op": "nak", "delay": delay})
	ans, err := p.nc.Request("mdap.engine.work."+p.id+".ack", act, 5*time.Second)
	require.NoError(t, err)
	require.NotContains(t, string(ans.Data), "error")
	handedBack := time.Now()

	p.pull(t, route, 10*time.Second)
	again := p.next(t, "the job handed back")
	took := time.Since(handedBack)
	t.Logf("the job came back after %s, delivery %s", took.Round(time.Millisecond), again.Header.Get("Mdap-Delivered"))
	assert.GreaterOrEqual(t, took, delay-100*time.Millisecond, "not before its delay")
	assert.Less(t, took, delay+2*time.Second, "soon after its delay")
	assert.Equal(t, "2", again.Header.Get("Mdap-Delivered"), "its second delivery: kept, not redelivered at each ack wait")
}
