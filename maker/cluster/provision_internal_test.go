package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentStopRefusesALateWorkRequest: a worker's request the
// subscription hands over after Stop (Unsubscribe does not wait for a
// callback under way) starts no goroutine, whose wg.Go would race Stop's
// Wait, and is answered at once that the engine is stopping.
func TestAgentStopRefusesALateWorkRequest(t *testing.T) {
	t.Parallel()
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	a, err := ServeAgent(context.Background(), nc, ProvisionConfig{})
	require.NoError(t, err)
	a.Stop()

	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	require.NoError(t, err)
	data, err := json.Marshal(pullRequest{Route: "r", N: 1, Wait: time.Second})
	require.NoError(t, err)
	a.handle(&nats.Msg{Subject: workSubject + "w1.pull", Reply: inbox, Data: data})
	assert.Zero(t, len(a.slots), "no goroutine serves it")
	m, err := sub.NextMsg(5 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, "the engine is stopping", m.Header.Get(endHeader))
	a.Stop() // again: no goroutine to wait for
}

// TestServeAgentServesOnceItReturns: a client that asks the agent the
// moment ServeAgent has returned is answered, never told nobody serves
// (errNoAgent, which a worker takes for a server without an engine and
// then fails to create its own consumer). The agent's subscription is
// held back in a proxy, as on a loaded machine or a slow link, for as
// long as ServeAgent would wait for it.
func TestServeAgentServesOnceItReturns(t *testing.T) {
	t.Parallel()
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	p := startHoldProxy(t, strings.TrimPrefix(srv.ClientURL(), "nats://"))
	agentConn, err := nats.Connect(p.url())
	require.NoError(t, err)
	t.Cleanup(agentConn.Close)
	client, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(client.Close)

	p.hold()
	time.AfterFunc(300*time.Millisecond, p.release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := ServeAgent(ctx, agentConn, ProvisionConfig{})
	require.NoError(t, err)
	t.Cleanup(a.Stop)
	err = askAgent(ctx, client, "nothing", agentRequest{})
	require.NotErrorIs(t, err, errNoAgent, "the agent was not serving when ServeAgent returned")
	require.ErrorIs(t, err, ErrEngine)
	assert.Contains(t, err.Error(), `no such request "nothing"`)
}

// holdProxy forwards TCP connections to a server; hold keeps what the
// clients send from reaching it until release.
type holdProxy struct {
	l       net.Listener
	held    atomic.Bool
	mu      sync.Mutex
	resumed chan struct{}
	wg      sync.WaitGroup
}

func startHoldProxy(t *testing.T, to string) *holdProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &holdProxy{l: l, resumed: make(chan struct{})}
	p.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			p.wg.Go(func() { p.pipe(s, c, true) })
			p.wg.Go(func() { p.pipe(c, s, false) })
		}
	})
	t.Cleanup(func() { p.release(); l.Close(); p.wg.Wait() })
	return p
}

func (p *holdProxy) pipe(dst, src net.Conn, up bool) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if up && p.held.Load() {
				<-p.resumed
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *holdProxy) url() string { return "nats://" + p.l.Addr().String() }

func (p *holdProxy) hold() { p.held.Store(true) }

func (p *holdProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held.Swap(false) {
		close(p.resumed)
	}
}

// TestJobsStreamTakesTheServedRoutesOnly: the engine's JobsStream takes
// the jobs of the routes a worker asked for (ProvisionRoute) and of no
// other; at most its bound of routes (refused past it, naming it); and
// provisioned again, it drops a route whose consumer was removed.
func TestJobsStreamTakesTheServedRoutesOnly(t *testing.T) {
	t.Parallel()
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, Provision(ctx, js, ProvisionConfig{}))
	subjects := func() []string {
		st, err := js.Stream(ctx, JobsStream)
		require.NoError(t, err)
		return st.CachedInfo().Config.Subjects
	}
	assert.Equal(t, []string{noRoute}, subjects(), "no route served yet")
	_, err = js.Publish(ctx, jobsSubject+RouteToken("a")+".k", []byte(`{}`))
	assert.ErrorIs(t, err, jetstream.ErrNoStreamResponse, "a job on a route nobody serves")

	require.NoError(t, ProvisionRoute(ctx, js, "a", ProvisionConfig{}))
	require.NoError(t, ProvisionRoute(ctx, js, "b", ProvisionConfig{}))
	require.NoError(t, ProvisionRoute(ctx, js, "a", ProvisionConfig{}), "again: the same subject")
	assert.ElementsMatch(t, []string{noRoute, routeJobs(RouteToken("a")), routeJobs(RouteToken("b"))}, subjects())
	_, err = js.Publish(ctx, jobsSubject+RouteToken("a")+".k", []byte(`{}`))
	require.NoError(t, err, "a job on a served route")

	err = serveRouteSubject(ctx, js, RouteToken("c"), 2)
	require.Error(t, err, "a third route past a bound of 2")
	assert.Contains(t, err.Error(), "serves 2 routes, its most")

	require.NoError(t, js.DeleteConsumer(ctx, JobsStream, workerConsumer(RouteToken("b"))))
	require.NoError(t, Provision(ctx, js, ProvisionConfig{}))
	assert.ElementsMatch(t, []string{noRoute, routeJobs(RouteToken("a"))}, subjects(), "b's consumer gone: its route too")
}

// A route whose consumer was removed (left unused) makes room for a new
// one when the engine serves its most, without a Provision: routes nobody
// serves cannot hold every route the engine serves.
func TestAnUnusedRouteMakesRoomAtTheMost(t *testing.T) {
	t.Parallel()
	js := testJS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := ProvisionConfig{MaxRoutes: 2}
	require.NoError(t, Provision(ctx, js, cfg))
	require.NoError(t, ProvisionRoute(ctx, js, "a", cfg))
	require.NoError(t, ProvisionRoute(ctx, js, "b", cfg))
	err := ProvisionRoute(ctx, js, "c", cfg)
	require.ErrorIs(t, err, ErrTooManyRoutes, "a third route past MaxRoutes 2, both in use")
	assert.Contains(t, err.Error(), "--max-routes")
	require.NoError(t, js.DeleteConsumer(ctx, JobsStream, workerConsumer(RouteToken("b"))))
	require.NoError(t, ProvisionRoute(ctx, js, "c", cfg), "b's consumer gone: its room")
	st, err := js.Stream(ctx, JobsStream)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{noRoute, routeJobs(RouteToken("a")), routeJobs(RouteToken("c"))}, st.CachedInfo().Config.Subjects)
}

// Only a route's job subject, mdap.jobs.<token>.*, counts as one when
// the engine rebuilds its list of served routes.
func TestIsRouteJobs(t *testing.T) {
	t.Parallel()
	for subj, want := range map[string]bool{
		jobsSubject + "abc.*":        true,
		jobsSubject + "abc.>":        false,
		jobsSubject + ".*":           false,
		jobsSubject + "a.b.*":        false,
		"mdap.replies.abc.*":         false,
		"evil.abc.*":                 false,
		"evil.*":                     false,
		jobsSubject + "abc":          false,
		routeJobs(RouteToken("sim")): true,
	} {
		assert.Equal(t, want, isRouteJobs(subj), subj)
	}
}

// A route served while the engine provisions again is not lost: the two
// read and write the job stream's subjects one at a time, so Provision
// does not write back a list read before the route was added (a route
// whose consumer exists but whose jobs no stream takes: every sample
// would wait out its timeout).
func TestRoutesServedWhileProvisioningAreKept(t *testing.T) {
	t.Parallel()
	js := testJS(t)
	cfg := ProvisionConfig{MaxRoutes: 30} // the routes it serves
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, Provision(ctx, js, cfg))
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			assert.NoError(t, Provision(ctx, js, cfg))
		}
	})
	var want []string
	for i := range 30 {
		route := fmt.Sprint("r", i)
		require.NoError(t, ProvisionRoute(ctx, js, route, cfg))
		want = append(want, routeJobs(RouteToken(route)))
	}
	close(done)
	wg.Wait()
	st, err := js.Stream(ctx, JobsStream)
	require.NoError(t, err)
	assert.Subset(t, st.CachedInfo().Config.Subjects, want)
}

// TestKeyJobsBoundAtTheDefaults: the figures the docs give for the
// defaults (a 256 MiB job stream, jobs of at most 256 KiB, KeyJobs 64,
// MaxRoutes 16): 32 jobs a key a route; 64 with MaxRoutes 8; 1 with 512;
// 513 refused as a setting, naming --max-routes. For every MaxRoutes
// allowed, one key's jobs over that many routes never pass half the
// stream, and the stream so bounded lets the agent serve that many routes
// (streamRoutes), no more than half of it in one key's jobs.
func TestKeyJobsBoundAtTheDefaults(t *testing.T) {
	t.Parallel()
	bound := func(routes int) int64 { return ProvisionConfig{MaxRoutes: routes}.keyBound() }
	assert.Equal(t, int64(32), ProvisionConfig{}.keyBound())
	assert.Equal(t, int64(32), bound(DefaultMaxRoutes))
	assert.Equal(t, int64(64), bound(8))
	assert.Equal(t, int64(1), bound(512))
	err := ProvisionConfig{MaxRoutes: 513}.Validate()
	require.ErrorIs(t, err, ErrConfig)
	assert.Contains(t, err.Error(), "MaxRoutes")
	assert.Contains(t, err.Error(), "--max-routes")
	for routes := 1; routes <= 512; routes++ {
		cfg := ProvisionConfig{MaxRoutes: routes}
		require.NoError(t, cfg.Validate(), "%d routes", routes)
		assert.LessOrEqual(t, bound(routes)*int64(routes)*DefaultJobBytes, int64(sampleStreamBytes/2), "%d routes", routes)
		c := jobsStreamConfig(1)
		c.MaxMsgsPerSubject = bound(routes)
		served := streamRoutes(c)
		assert.GreaterOrEqual(t, served, routes, "the agent serves MaxRoutes %d", routes)
		assert.LessOrEqual(t, int64(served)*c.MaxMsgsPerSubject*DefaultJobBytes, int64(sampleStreamBytes/2), "%d routes", routes)
	}
}

// TestRouteQuotaAtMostMaxRoutes: a route quota past the engine's routes
// is refused, naming both; the default quota is 4, or MaxRoutes if fewer.
func TestRouteQuotaAtMostMaxRoutes(t *testing.T) {
	t.Parallel()
	err := ProvisionConfig{MaxRoutes: 8, RouteQuota: 9}.Validate()
	require.ErrorIs(t, err, ErrConfig)
	assert.Contains(t, err.Error(), "RouteQuota")
	assert.Contains(t, err.Error(), "--max-routes")
	require.NoError(t, ProvisionConfig{MaxRoutes: 8, RouteQuota: 8}.Validate())
	assert.Equal(t, DefaultRouteQuota, ProvisionConfig{}.routeQuota())
	assert.Equal(t, 2, ProvisionConfig{MaxRoutes: 2}.routeQuota())
}

// TestDrawerQuotaAtMostMaxDrawers: a Drawer quota past the engine's
// Drawers is refused, naming both; the default quota is 8, or MaxDrawers
// if fewer.
func TestDrawerQuotaAtMostMaxDrawers(t *testing.T) {
	t.Parallel()
	err := ProvisionConfig{MaxDrawers: 8, DrawerQuota: 9}.Validate()
	require.ErrorIs(t, err, ErrConfig)
	assert.Contains(t, err.Error(), "DrawerQuota")
	assert.Contains(t, err.Error(), "MaxDrawers")
	require.NoError(t, ProvisionConfig{MaxDrawers: 8, DrawerQuota: 8}.Validate())
	assert.Equal(t, DefaultDrawerQuota, ProvisionConfig{}.drawerQuota())
	assert.Equal(t, 2, ProvisionConfig{MaxDrawers: 2}.drawerQuota())
}

// TestOnlyJetStreamsUnavailableIsUnserved: the agent answers "busy, ask
// again" to a request whose JetStream call was refused with 503 (a
// cluster electing its leaders: nothing was done), wrapped or not, and
// to no other failure, which may have done part of its work.
func TestOnlyJetStreamsUnavailableIsUnserved(t *testing.T) {
	t.Parallel()
	unavailable := &jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}
	assert.True(t, unserved(unavailable))
	assert.True(t, unserved(fmt.Errorf("%w: the reply consumer: %w", ErrEngine, unavailable)))
	assert.False(t, unserved(&jetstream.APIError{Code: 500, ErrorCode: 10049, Description: "insufficient resources"}))
	assert.False(t, unserved(context.DeadlineExceeded), "a timeout may have done its work")
	assert.False(t, unserved(nil))
}
