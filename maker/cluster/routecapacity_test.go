package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// askRoute asks the engine's agent, as the worker connected as nc, to
// serve route, and returns its refusal ("" when served).
func askRoute(ctx context.Context, t *testing.T, nc *nats.Conn, route string) string {
	t.Helper()
	data, _ := json.Marshal(map[string]string{"route": route})
	m, err := nc.RequestWithContext(ctx, "mdap.engine.route."+identityOf(nc), data)
	require.NoError(t, err)
	var resp struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(m.Data, &resp))
	return resp.Error
}

// TestAddedRoutesDeleteNoQueuedJob: a run has its key's whole bound of
// jobs queued on a route while a worker identity (with a quota as large
// as the engine's routes) asks for routes of its own invention, up to the
// engine's most and past it. Every queued job is kept and the per-key
// bound never changes; the routes past DefaultMaxRoutes are refused,
// naming --max-routes. Before (issue 35 review), the engine lowered the
// bound as routes grew: 64 queued jobs, 16 routes asked, the bound fell
// to 30 and the server deleted 34 of the run's jobs.
func TestAddedRoutesDeleteNoQueuedJob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rogueSeed, err := cluster.AddWorker(dir, "rogue")
	require.NoError(t, err)
	runSeed, err := cluster.AddRunCoordinator(dir, "honest")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	cfg := cluster.ProvisionConfig{RouteQuota: cluster.DefaultMaxRoutes}
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, Provision: cfg})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := srv.ClientURL()
	_, ajs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleAdmin))
	require.NoError(t, cluster.ProvisionRoute(ctx, ajs, "honest-model", cfg))
	st, err := ajs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	bound := st.CachedInfo().Config.MaxMsgsPerSubject
	require.Positive(t, bound)

	// The run's whole bound of jobs, queued (no worker takes them).
	_, hjs := connectAs(t, url, runSeed)
	subj := "mdap.jobs." + cluster.RouteToken("honest-model") + "." + identityOf(hjs.Conn())
	for i := range bound {
		_, err := hjs.Publish(ctx, subj, []byte(fmt.Sprint("job ", i)))
		require.NoError(t, err, "job %d of %d", i+1, bound)
	}
	queued := func() uint64 {
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(subj))
		require.NoError(t, err)
		return info.State.Subjects[subj]
	}
	require.Equal(t, uint64(bound), queued())

	rogue, _ := connectAs(t, url, rogueSeed)
	served, refusal := 0, ""
	for i := range cluster.DefaultMaxRoutes + 4 {
		if msg := askRoute(ctx, t, rogue, fmt.Sprint("invented-", i)); msg == "" {
			served++
		} else {
			refusal = msg
		}
	}
	assert.Equal(t, cluster.DefaultMaxRoutes-1, served, "the rogue's routes beside the run's: up to the engine's most")
	assert.Contains(t, refusal, "--max-routes")
	assert.Equal(t, uint64(bound), queued(), "the run's queued jobs: all kept")
	info, err := st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, bound, info.Config.MaxMsgsPerSubject, "the per-key bound: unchanged")
	assert.Len(t, info.Config.Subjects, cluster.DefaultMaxRoutes+1, "the routes served (and the no-route subject)")
}

// TestRouteQuotaSurvivesTheAgentsRestart: a worker identity makes the
// engine serve its quota of routes; the engine (its agent with it) starts
// again on the same store (durable sample streams, so the routes'
// consumers persist). The identity still gets no route past its quota: the
// count is read from the consumers it made, not from the agent's memory.
// A route it added costs it nothing to ask again. Before, the quota lived
// in the agent and started again with it: DefaultRouteQuota more routes
// at every restart.
func TestRouteQuotaSurvivesTheAgentsRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rogueSeed, err := cluster.AddWorker(dir, "rogue")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	store := t.TempDir()
	start := func() *cluster.Server {
		srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: store, Roles: keys,
			Provision: cluster.ProvisionConfig{DurableSamples: true}})
		require.NoError(t, err)
		t.Cleanup(srv.Shutdown)
		return srv
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ask := func(srv *cluster.Server, prefix string) (served int, refusal string) {
		rogue, _ := connectAs(t, srv.ClientURL(), rogueSeed)
		defer rogue.Close()
		for i := range 2 * cluster.DefaultRouteQuota {
			if msg := askRoute(ctx, t, rogue, fmt.Sprint(prefix, i)); msg == "" {
				served++
			} else {
				refusal = msg
			}
		}
		return served, refusal
	}
	srv := start()
	served, refusal := ask(srv, "first-")
	assert.Equal(t, cluster.DefaultRouteQuota, served, "before the restart")
	assert.Contains(t, refusal, "--route-quota")
	srv.Shutdown()

	srv = start()
	served, refusal = ask(srv, "second-")
	assert.Zero(t, served, "after the restart: the quota is still taken")
	assert.Contains(t, refusal, "--route-quota")
	rogue, _ := connectAs(t, srv.ClientURL(), rogueSeed)
	assert.Empty(t, askRoute(ctx, t, rogue, "first-0"), "a route it added, asked again")
	_, ajs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleAdmin))
	st, err := ajs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	n := 0
	for _, subj := range st.CachedInfo().Config.Subjects {
		if strings.HasSuffix(subj, ".*") {
			n++
		}
	}
	assert.Equal(t, cluster.DefaultRouteQuota, n, "the routes served")
}
