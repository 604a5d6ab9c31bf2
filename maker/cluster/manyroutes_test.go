package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manyRoutes is how many routes the engine serves in
// TestOneKeyCannotFillTheJobStreamOverManyRoutes: more than the
// floodBytes / 2 / (keyJobs × jobBytes) = 4 at which one key, at its fixed
// bound of keyJobs a route, could fill half of the stream.
const manyRoutes = 20

// TestOneKeyCannotFillTheJobStreamOverManyRoutes: an engine that serves
// up to manyRoutes routes (MaxRoutes) serves them all, and the holder of
// one run's key floods every one of them with jobs all along another run.
// The engine fixed the jobs one key may have on a route at Provision for
// MaxRoutes routes (min(KeyJobs, SampleBytes / 2 / (MaxRoutes ×
// JobBytes)) = 1 here), so the stream stays under half full, and the
// other run ends with an undisturbed run's winners. With the bound at
// KeyJobs whatever the routes, the flood filled the stream and the run's
// samples failed. The bound never changes as routes are added, and the
// route past MaxRoutes is refused, naming --max-routes.
func TestOneKeyCannotFillTheJobStreamOverManyRoutes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rogueSeed, err := cluster.AddRunCoordinator(dir, "rogue")
	require.NoError(t, err)
	honestSeed, err := cluster.AddRunCoordinator(dir, "honest")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	cfg := cluster.ProvisionConfig{SampleBytes: floodBytes, KeyJobs: keyJobs, JobBytes: jobBytes, MaxRoutes: manyRoutes, MaxDrawers: floodDrawers, ReplyBytes: floodReplyBytes}
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, Provision: cfg})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	manyRoutesScenario(t, srv.ClientURL(), rogueSeed, honestSeed, cluster.SeedFile(dir, cluster.RoleWorker), cluster.SeedFile(dir, cluster.RoleAdmin), cfg, true)
}

// manyRoutesScenario: see TestOneKeyCannotFillTheJobStreamOverManyRoutes;
// url is an engine provisioned with cfg (SampleBytes floodBytes, KeyJobs
// keyJobs, JobBytes jobBytes, MaxRoutes manyRoutes), serving fewer than
// manyRoutes routes. full: then see the next route refused.
func manyRoutesScenario(t *testing.T, url, rogueSeed, honestSeed, workerSeed, adminSeed string, cfg cluster.ProvisionConfig, full bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, ajs := connectAs(t, url, adminSeed)
	vcfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 3, vcfg)
	_, wjs := connectAs(t, url, workerSeed)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	st, err := ajs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	served := func() []string {
		info, err := st.Info(ctx)
		require.NoError(t, err)
		var tokens []string
		for _, subj := range info.Config.Subjects {
			if token, ok := strings.CutSuffix(strings.TrimPrefix(subj, "mdap.jobs."), ".*"); ok {
				tokens = append(tokens, token)
			}
		}
		return tokens
	}
	info, err := st.Info(ctx)
	require.NoError(t, err)
	want := min(int64(keyJobs), floodBytes/2/(manyRoutes*jobBytes))
	require.Equal(t, want, info.Config.MaxMsgsPerSubject, "the bound of %d routes, fixed at Provision", manyRoutes)
	for i := 0; len(served()) < manyRoutes; i++ {
		require.NoError(t, cluster.ProvisionRoute(ctx, ajs, fmt.Sprintf("other-model-%d", i), cfg))
	}
	routes := served()
	require.Len(t, routes, manyRoutes)
	info, err = st.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, info.Config.MaxMsgsPerSubject, "the bound, unchanged by the routes added")

	rogue, _ := connectAs(t, url, rogueSeed)
	key := identityOf(rogue)
	junk := []byte(strings.Repeat("x", jobBytes-512))
	var sent atomic.Int64
	flood := func(ctx context.Context) {
		for ctx.Err() == nil {
			for _, r := range routes {
				_ = rogue.Publish("mdap.jobs."+r+"."+key, junk)
				sent.Add(1)
			}
			_ = rogue.Flush()
			time.Sleep(time.Millisecond) // a flood, not a CPU hog
		}
	}
	var most atomic.Uint64
	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() { followHighWater(fctx, st, &most) })
	for range 4 * floodBytes / (manyRoutes * jobBytes) {
		for _, r := range routes {
			_ = rogue.Publish("mdap.jobs."+r+"."+key, junk)
		}
	}
	require.NoError(t, rogue.Flush())
	wg.Go(func() { flood(fctx) })

	_, cjs := connectAs(t, url, honestSeed)
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 20 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	before := sent.Load()
	_, gotSteps := solveHanoi(t, remote, 3, vcfg)
	assert.Equal(t, wantSteps, gotSteps)
	assert.Greater(t, sent.Load()-before, int64(4*floodBytes/jobBytes), "the flood went on during the run")
	assert.Less(t, most.Load(), uint64(floodBytes/2), "the job stream's most bytes: under half (its bound: %d)", floodBytes)
	stop()
	wg.Wait()
	if !full {
		return
	}

	// The route past MaxRoutes is refused, naming --max-routes; the bound
	// and the routes are unchanged.
	err = cluster.ProvisionRoute(ctx, ajs, "one-too-many", cfg)
	require.ErrorIs(t, err, cluster.ErrTooManyRoutes)
	assert.Contains(t, err.Error(), "--max-routes")
	info, err = st.Info(ctx, jetstream.WithSubjectFilter("mdap.jobs.>"))
	require.NoError(t, err)
	assert.Equal(t, want, info.Config.MaxMsgsPerSubject)
	assert.Len(t, info.Config.Subjects, manyRoutes+1, "the routes served, and no more (and the no-route subject)")
}
