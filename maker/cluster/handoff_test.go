package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/wait"
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
	d, err := cluster.NewDrawer(ctx, vjs, cluster.DrawerConfig{Timeout: timeout, NoWorker: rawPullsOnly})
	require.NoError(t, err)
	remote, err := d.Model(route)
	require.NoError(t, err)
	e := &handoffStage{url: url, route: route, vnc: vnc, s: s}
	e.call = func(prompt string) { go func() { _, _ = remote.Call(ctx, prompt) }() }
	e.sitter, _ = connectAs(t, url, sseed)
	e.honest, _ = connectAs(t, url, s.worker)
	return e
}

// moreAgents has n more agents serve the stage's engine (each a second
// maker nats provision).
func (e *handoffStage) moreAgents(t *testing.T, n int) {
	t.Helper()
	for range n {
		anc, _ := connectAs(t, e.url, e.s.admin)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		a, err := cluster.ServeAgent(ctx, anc, cluster.ProvisionConfig{})
		require.NoError(t, err)
		t.Cleanup(a.Stop)
	}
}

// pullAll makes one pull of n jobs waiting wait through the agent, and
// returns the jobs of its answer, once its end marker came.
func pullAll(t *testing.T, nc *nats.Conn, route string, n int, wait time.Duration) []*nats.Msg {
	t.Helper()
	return pullSkipping(t, nc, route, n, wait, nil)
}

// pullSkipping is pullAll with the pull's skip.
func pullSkipping(t *testing.T, nc *nats.Conn, route string, n int, wait time.Duration, skip map[string]time.Duration) []*nats.Msg {
	t.Helper()
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	req, _ := json.Marshal(map[string]any{"route": route, "n": n, "wait": wait, "skip": skip})
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

// TestAPullIsSentNoMoreJobsThanItAskedFor (review21, medium-low;
// review22, low): a pull of two jobs given two kept jobs at once is sent
// no job its fetch from JetStream brings after them (it was: the worker
// got more jobs than its free places and called its model on all at
// once), and those jobs spend no delivery: each is kept for the next
// pull, which gets it as delivery 1. Each was handed back as a NAK
// (delivery 2, and, round after round, to MaxDeliver: lost); then the
// first only was kept, each later one NAKed (a sitter's hand-backs keeping
// an honest worker's places full lost 5 of 160 jobs so).
func TestAPullIsSentNoMoreJobsThanItAskedFor(t *testing.T) {
	t.Parallel()
	e := newHandoffStage(t, time.Minute)
	e.call("first")
	e.call("second")
	for _, job := range e.sitterTakes(t, 2) {
		nakWithDelay(t, e.sitter, job, time.Minute)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		e.call("third")
		e.call("fourth")
	}()
	got := pullAll(t, e.honest, e.route, 2, 3*time.Second)
	t.Logf("the honest worker's pull of 2 was sent %d jobs", len(got))
	assert.Len(t, got, 2, "a pull of 2 is sent the 2 kept jobs, and no other")
	next := pullAll(t, e.honest, e.route, 2, 3*time.Second)
	require.Len(t, next, 2, "the third and fourth jobs")
	for _, job := range next {
		t.Logf("a job never sent to a worker before came as delivery %s", job.Header.Get("Mdap-Delivered"))
		assert.Equal(t, "1", job.Header.Get("Mdap-Delivered"), "a job no worker was sent spent no delivery")
	}
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

// TestASitterPastItsHandoffCapStallsNoOtherRun (review22, medium): a
// worker credential pulls skipping, for a minute, the jobs of the five
// coordinators on its route (160 queued, each run under its 64), or
// pulls them all and NAKs each with a minute's delay. The agent keeps
// 128 of them for other workers (maxHandoffsPerKey); it handed every one
// past that back as the sitter's minute's delayed NAK, held from every
// worker (#35's stall again: the honest worker was given 128 of 160).
// Past its cap a hand-back is a NAK of at most avoidDelay, and the
// sitter's pulls fetch nothing until fewer are kept: the honest worker,
// pulling with free places, is given every queued job.
func TestASitterPastItsHandoffCapStallsNoOtherRun(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"skip", "nak"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			sitterPastItsHandoffCap(t, how == "nak")
		})
	}
}

// sitterPastItsHandoffCap: see TestASitterPastItsHandoffCapStallsNoOtherRun;
// the sitter NAKs the jobs it pulls with nak, else skips them.
func sitterPastItsHandoffCap(t *testing.T, nak bool) {
	dir := t.TempDir()
	_, s := issueTenants(t, dir)
	coords := []string{s.victim, s.thief}
	for _, name := range []string{"c3", "c4", "c5"} {
		seed, err := cluster.AddRunCoordinator(dir, name)
		require.NoError(t, err)
		coords = append(coords, seed)
	}
	sseed, err := cluster.AddWorker(dir, "w1")
	require.NoError(t, err)
	cfg := cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()}
	cfg.Roles, _, err = cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cfg)
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()

	_, wjs := connectAs(t, url, s.worker)
	route := newWorker(t, wjs, echoAfter{}, cluster.WorkerConfig{}).Route() // never run
	sitter, _ := connectAs(t, url, sseed)
	honest, _ := connectAs(t, url, s.worker)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	skip := map[string]time.Duration{}
	const perRun = 60
	for ci, seed := range coords {
		nc, js := connectAs(t, url, seed)
		skip[identityOf(nc)] = time.Minute
		d, err := cluster.NewDrawer(ctx, js, cluster.DrawerConfig{Timeout: 3 * time.Minute, NoWorker: rawPullsOnly})
		require.NoError(t, err)
		remote, err := d.Model(route)
		require.NoError(t, err)
		for i := range perRun {
			go func() { _, _ = remote.Call(ctx, fmt.Sprintf("run %d call %d", ci, i)) }()
		}
	}
	sctx, sstop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { sstop(); wg.Wait() }()
	for range 2 { // the sitter pulls, and skips, every job as it is queued
		if nak {
			break
		}
		wg.Go(func() {
			for sctx.Err() == nil {
				pullSkipping(t, sitter, route, 256, time.Second, skip)
			}
		})
	}
	time.Sleep(4 * time.Second)
	_, ajs := connectAs(t, url, s.admin)
	st, err := ajs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	// The jobs queued now: the coordinators may still be queueing more
	// (a loaded machine slows their calls), which the honest worker may
	// be given too, but not instead of these.
	queued := map[string]bool{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		if m, err := st.GetMsg(ctx, seq); err == nil {
			queued[string(m.Data)] = true
		}
	}
	require.Greater(t, len(queued), 128, "more jobs queued than one identity may have kept")
	if nak { // the sitter takes every queued job at once, and NAKs each
		jobs := pullAll(t, sitter, route, 256, time.Second)
		require.Greater(t, len(jobs), 128, "the sitter holds more jobs than it may have kept")
		for _, job := range jobs {
			nakWithDelay(t, sitter, job, time.Minute)
		}
	}

	given, total := 0, len(queued)
	deadline := time.Now().Add(10 * time.Second)
	for len(queued) > 0 && time.Now().Before(deadline) {
		for _, m := range pullAll(t, honest, route, 64, time.Second) {
			if queued[string(m.Data)] {
				given++
				delete(queued, string(m.Data))
			}
		}
	}
	t.Logf("the honest worker, with free places for 10 s, was given %d of the %d queued jobs", given, total)
	assert.Empty(t, queued, "no job the sitter skipped is held back from the honest worker")
}

// TestAJobKeptByOneAgentReachesAPullOfAnother: with three agents, a job
// the sitter hands back with a minute's delay is kept by one of them,
// and the honest worker's pull, whichever agent it reaches, is given it
// at once: an agent keeping none hands the pull on to the one that does
// (handoffpeers.go). It was given it only when it reached that agent,
// one pull in three; the others waited out their 2 s for jobs JetStream
// did not have.
func TestAJobKeptByOneAgentReachesAPullOfAnother(t *testing.T) {
	t.Parallel()
	e := newHandoffStage(t, time.Minute)
	e.moreAgents(t, 2)
	for i := range 5 {
		e.call(fmt.Sprintf("call %d", i))
		nakWithDelay(t, e.sitter, e.sitterTakes(t, 1)[0], time.Minute)
		time.Sleep(300 * time.Millisecond) // the keeping agent's news reaches the others
		took, ok := firstJob(t, e.honest, e.route, 2*time.Second)
		t.Logf("hand-back %d: the honest worker's pull was given the job: %v, after %s", i+1, ok, took.Round(time.Millisecond))
		require.True(t, ok, "hand-back %d: the kept job goes to the honest worker's pull, whichever agent it reached", i+1)
		assert.Less(t, took, time.Second, "hand-back %d: at once, not after the pull's wait", i+1)
	}
}

// firstJob makes one pull of a job waiting wait through the agent, and
// returns when its job came, or false when its answer ended with none.
func firstJob(t *testing.T, nc *nats.Conn, route string, wait time.Duration) (time.Duration, bool) {
	t.Helper()
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	req, _ := json.Marshal(map[string]any{"route": route, "n": 1, "wait": wait})
	id := strings.TrimPrefix(nc.Opts.InboxPrefix, "_INBOX_")
	start := time.Now()
	require.NoError(t, nc.PublishRequest("mdap.engine.work."+id+".pull", inbox, req))
	for {
		m, err := sub.NextMsg(wait + 5*time.Second)
		require.NoError(t, err, "the pull's end never came")
		switch {
		case m.Header.Get("Mdap-Handle") != "":
			return time.Since(start), true
		case m.Header.Get("Mdap-End") != "":
			return time.Since(start), false
		}
	}
}

// TestALateRelayAnswerServesThePullOnce (review23, medium-high): a pull
// handed on to an agent that takes it up but answers late (a far node,
// a loaded machine: here a stand-in agent answering after 800 ms, past
// relayWait) is not served by the agent it reached too. It was: that
// agent took the late answer for a refusal and sent a job of its own
// after the other's end marker, to a pull its worker no longer read; the
// job was held for nobody for the ack wait, and struck against the
// worker.
func TestALateRelayAnswerServesThePullOnce(t *testing.T) {
	t.Parallel()
	e := newHandoffStage(t, time.Minute)
	anc, _ := connectAs(t, e.url, e.s.admin)
	// The stand-in says it keeps a job of the route every 300 ms, and
	// takes up each pull handed on to it late, ending it with no job.
	var taken atomic.Int32
	_, err := anc.Subscribe("mdap.agents.pull.far", func(m *nats.Msg) {
		go func() {
			time.Sleep(800 * time.Millisecond)
			taken.Add(1)
			_ = m.Respond(nil)
			end := nats.NewMsg(m.Header.Get("Mdap-Relay-Reply"))
			end.Header.Set("Mdap-End", "1")
			_ = anc.PublishMsg(end)
		}()
	})
	require.NoError(t, err)
	news, _ := json.Marshal(map[string]any{"from": "far", "keeps": map[string][]string{cluster.RouteToken(e.route): {"someone"}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			_ = anc.Publish("mdap.agents.news", news)
			_ = wait.Sleep(ctx, 300*time.Millisecond)
		}
	}()
	time.Sleep(500 * time.Millisecond)
	e.call("queued") // a job in JetStream the agent could send itself
	time.Sleep(300 * time.Millisecond)
	got := pullAll(t, e.honest, e.route, 1, 2*time.Second)
	t.Logf("the pull was taken up by the stand-in %d times; the agent it reached sent %d jobs", taken.Load(), len(got))
	require.Positive(t, taken.Load(), "the pull was handed on")
	assert.Empty(t, got, "a pull another agent took up, however late, is not served where it landed too")
}

// TestNoClientReachesTheAgentsSubjects: the agents' own subjects (a pull
// handed on, news of kept jobs, an act relayed) are the admin identity's:
// a worker, a run coordinator or an issued worker publishing there reaches
// no agent, so none can forge news of kept jobs to draw every pull to
// one place, nor hand an agent a pull under another worker's subject.
func TestNoClientReachesTheAgentsSubjects(t *testing.T) {
	t.Parallel()
	url, s, issued := tenantsAndAWorkerOn(t, cluster.ServerConfig{})
	anc, _ := connectAs(t, url, s.admin)
	heard := make(chan string, 64)
	sub, err := anc.Subscribe("mdap.agents.>", func(m *nats.Msg) {
		if string(m.Data) == "forged" || string(m.Data) == "admin's" {
			heard <- m.Subject + " " + string(m.Data)
		}
	})
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	require.NoError(t, anc.Flush())
	for name, seed := range map[string]string{"worker": s.worker, "issued worker": issued, "run coordinator": s.victim} {
		nc, _ := connectAs(t, url, seed)
		for _, subject := range []string{"mdap.agents.pull.any", "mdap.agents.news", "mdap.agents.act"} {
			_ = nc.Publish(subject, []byte("forged"))
		}
		_ = nc.Flush()
		t.Logf("%s published on the agents' subjects", name)
	}
	require.NoError(t, anc.Publish("mdap.agents.news", []byte("admin's"))) // the control: heard
	select {
	case got := <-heard:
		assert.Equal(t, "mdap.agents.news admin's", got, "only the admin's message is heard")
	case <-time.After(5 * time.Second):
		t.Fatal("the admin's own message was not heard")
	}
	select {
	case got := <-heard:
		t.Errorf("a client's message reached the agents' subjects: %s", got)
	case <-time.After(500 * time.Millisecond):
	}
}
