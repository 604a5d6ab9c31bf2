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

// TestOneIdentityCannotInventEveryRoute: a worker identity asks the
// engine for 100 routes of its own invention (issue 35: one worker
// credential could make it serve 1024, squeezing every route's per-key
// bound and blocking new routes). The engine serves the first
// DefaultRouteQuota (4) and refuses the rest, naming the quota; a route
// already served still costs it nothing, and another identity's new route
// is served. The identity cannot ask in another identity's name (the
// server refuses the subject), nor without one.
func TestOneIdentityCannotInventEveryRoute(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rogueSeed, err := cluster.AddWorker(dir, "rogue")
	require.NoError(t, err)
	honestSeed, err := cluster.AddWorker(dir, "honest")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	routeQuotaScenario(t, srv.ClientURL(), rogueSeed, honestSeed, cluster.SeedFile(dir, cluster.RoleAdmin), cluster.DefaultRouteQuota, true)
}

// routeQuotaScenario: see TestOneIdentityCannotInventEveryRoute; quota
// is the engine's RouteQuota. fresh: the rogue identity has made the
// engine serve no route yet, so exactly quota of its routes are served
// (else at most quota).
func routeQuotaScenario(t *testing.T, url, rogueSeed, honestSeed, adminSeed string, quota int, fresh bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rogue, _ := connectAs(t, url, rogueSeed)
	key := identityOf(rogue)
	ask := func(nc *nats.Conn, subject, route string) (string, error) {
		data, _ := json.Marshal(map[string]string{"route": route})
		m, err := nc.RequestWithContext(ctx, subject, data)
		if err != nil {
			return "", err
		}
		var resp struct {
			Error string `json:"error"`
		}
		require.NoError(t, json.Unmarshal(m.Data, &resp))
		return resp.Error, nil
	}
	served, refused := 0, 0
	var refusal string
	for i := range 100 {
		msg, err := ask(rogue, "mdap.engine.route."+key, fmt.Sprintf("invented-%s-%d", key[:8], i))
		require.NoError(t, err)
		if msg == "" {
			served++
			assert.Zero(t, refused, "route %d served after a refusal", i)
			continue
		}
		refused++
		refusal = msg
	}
	if fresh {
		assert.Equal(t, quota, served, "the routes of one identity served")
	} else {
		assert.LessOrEqual(t, served, quota)
	}
	assert.Equal(t, 100-served, refused)
	assert.Contains(t, refusal, "quota")
	assert.Contains(t, refusal, "--route-quota")

	// Another identity's new route is served, and a worker serves it.
	_, hjs := connectAs(t, url, honestSeed)
	honest := newWorker(t, hjs, simModel(t, 17), cluster.WorkerConfig{})
	_, ajs := connectAs(t, url, adminSeed)
	_, err := ajs.Consumer(ctx, cluster.JobsStream, "w-"+cluster.RouteToken(honest.Route()))
	require.NoError(t, err, "the honest identity's route has its consumer")
	// A route already served costs the rogue nothing.
	msg, err := ask(rogue, "mdap.engine.route."+key, honest.Route())
	require.NoError(t, err)
	assert.Empty(t, msg, "a route already served")

	// Not in another's name (the server refuses the publication, so no
	// answer comes), nor in none (an older worker's request: the engine
	// answers that it must upgrade, and adds nothing).
	st, err := ajs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	before, err := st.Info(ctx)
	require.NoError(t, err)
	honestNC, _ := connectAs(t, url, honestSeed)
	sctx, scancel := context.WithTimeout(ctx, 500*time.Millisecond)
	data, _ := json.Marshal(map[string]string{"route": "stolen-" + key[:8]})
	_, err = rogue.RequestWithContext(sctx, "mdap.engine.route."+identityOf(honestNC), data)
	scancel()
	assert.Error(t, err, "in another's name: refused")
	msg, err = ask(rogue, "mdap.engine.route", "stolen-"+key[:8])
	require.NoError(t, err)
	assert.Contains(t, msg, "upgrade", "in none")
	after, err := st.Info(ctx, jetstream.WithSubjectFilter("mdap.jobs.>"))
	require.NoError(t, err)
	assert.Equal(t, len(before.Config.Subjects), len(after.Config.Subjects), "no route added in another's name")
	for _, subj := range after.Config.Subjects {
		assert.False(t, strings.Contains(subj, cluster.RouteToken("stolen-"+key[:8])), subj)
	}
}
