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
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// The bounds of the job stream in TestOneKeyCannotFillTheJobStream: a
// stream of floodBytes (1 MiB), of which one key may hold keyJobs jobs of
// at most jobBytes on a route (128 KiB).
const (
	keyJobs  = 8
	jobBytes = 16 << 10
)

// TestOneKeyCannotFillTheJobStream: the holder of one run's key publishes
// jobs in a loop all along another run (issue 35, "one key can fill
// MDAP_JOBS"): on the route the workers serve under its own key, on
// routes of its own invention, and on the served route under keys of its
// own invention. The server takes at most keyJobs of its jobs, all on its
// own subject of the served route; the other run, on another run's key,
// ends with the winners of an undisturbed run. Before, the loop filled
// the stream in a moment and every other run's samples failed.
func TestOneKeyCannotFillTheJobStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rogueSeed, err := cluster.AddRunCoordinator(dir, "rogue")
	require.NoError(t, err)
	honestSeed, err := cluster.AddRunCoordinator(dir, "honest")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{SampleBytes: floodBytes, KeyJobs: keyJobs, JobBytes: jobBytes, MaxDrawers: floodDrawers, ReplyBytes: floodReplyBytes}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	keyJobsScenario(t, srv.ClientURL(), rogueSeed, honestSeed, cluster.SeedFile(dir, cluster.RoleWorker), cluster.SeedFile(dir, cluster.RoleAdmin))
}

// keyJobsScenario: see TestOneKeyCannotFillTheJobStream; url is an
// engine provisioned with SampleBytes floodBytes, KeyJobs keyJobs and
// JobBytes jobBytes, rogue and honest are the seeds of two runs' keys.
func keyJobsScenario(t *testing.T, url, rogueSeed, honestSeed, workerSeed, adminSeed string) {
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 3, cfg)
	_, wjs := connectAs(t, url, workerSeed)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	served := "mdap.jobs." + cluster.RouteToken(worker.Route()) + "."
	rogue, rjs := connectAs(t, url, rogueSeed)
	key := identityOf(rogue)

	// Jobs nobody takes: no worker has the reply subject's drawer, and
	// the bodies are not jobs, so a worker that takes one drops it.
	junk := []byte(strings.Repeat("x", jobBytes-512))
	subjects := func(i int) []string {
		return []string{served + key, fmt.Sprintf("mdap.jobs.invented%d.%s", i, key), fmt.Sprintf("%sother%d", served, i)}
	}
	var sent, refused atomic.Int64
	flood := func(ctx context.Context) {
		for i := 0; ctx.Err() == nil; i++ {
			for _, subj := range subjects(i) {
				_ = rogue.Publish(subj, junk)
				sent.Add(1)
			}
			if i%32 == 31 {
				// Through JetStream too, to see the server's answers.
				pctx, cancel := context.WithTimeout(ctx, time.Second)
				if _, err := rjs.Publish(pctx, served+key, junk); err != nil {
					refused.Add(1)
				}
				cancel()
				_ = rogue.Flush()
				time.Sleep(time.Millisecond) // a flood, not a CPU hog
			}
		}
	}
	// The stream's fill, watched all along by the admin: the most bytes
	// it held.
	_, ajs := connectAs(t, url, adminSeed)
	st, err := ajs.Stream(context.Background(), cluster.JobsStream)
	require.NoError(t, err)
	var most atomic.Uint64

	// Flooded before the run begins, many times the stream's size, and
	// all along.
	fctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() { followHighWater(fctx, st, &most) })
	for i := 0; int64(i)*jobBytes < 4*floodBytes; i++ {
		for _, subj := range subjects(-i - 1) {
			_ = rogue.Publish(subj, junk)
		}
	}
	require.NoError(t, rogue.Flush())
	wg.Go(func() { flood(fctx) })

	_, cjs := connectAs(t, url, honestSeed)
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 20 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	before := sent.Load()
	_, gotSteps := solveHanoi(t, remote, 3, cfg)
	assert.Equal(t, wantSteps, gotSteps)
	assert.Greater(t, sent.Load()-before, int64(4*floodBytes/jobBytes), "the flood went on during the run")
	assert.Positive(t, refused.Load(), "the server refused the rogue's jobs past its bound")
	assert.Less(t, most.Load(), uint64(floodBytes/2), "the job stream's most bytes: far from full (its bound: %d)", floodBytes)

	// What the server holds of the rogue: its own subject of the served
	// route only, at most keyJobs jobs.
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter("mdap.jobs.>"))
	require.NoError(t, err)
	for subj, n := range info.State.Subjects {
		if subj == served+key {
			assert.LessOrEqual(t, n, uint64(keyJobs), subj)
			continue
		}
		assert.False(t, strings.HasSuffix(subj, "."+key) || strings.Contains(subj, "invented") || strings.Contains(subj, "other"),
			"the rogue queued on %s (%d jobs)", subj, n)
	}
}

// idleRouteSubject makes the engine take the jobs of a route no worker
// pulls, its consumer made by the admin ajs, and returns the subject the
// coordinator connected as nc publishes such a job on: a job that stays
// queued, for a reader or a purger to try.
func idleRouteSubject(t *testing.T, ajs jetstream.JetStream, nc *nats.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, cluster.ProvisionRoute(ctx, ajs, "probe", cluster.ProvisionConfig{}))
	return "mdap.jobs." + cluster.RouteToken("probe") + "." + identityOf(nc)
}

// slowEcho answers every prompt with its text, after a pause: a worker's
// model whose jobs stay held for a while.
type slowEcho struct{}

func (slowEcho) Identity() string { return "slow-echo" }

func (m slowEcho) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func (slowEcho) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(50 * time.Millisecond):
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: sim.PromptText(msgs), StopReason: "stop"}}}, nil
}

// TestAKeyAtItsBoundWaitsForItsJobs: a coordinator with more jobs in
// flight on a route than the engine keeps of one key (KeyJobs 2, eight
// calls at once, one worker taking one at a time) is not failed by the
// bound: each job past it is published again as the earlier ones are
// taken, and every call is answered.
func TestAKeyAtItsBoundWaitsForItsJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{KeyJobs: 2}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	_, wjs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleWorker))
	runWorker(t, newWorker(t, wjs, slowEcho{}, cluster.WorkerConfig{Inflight: 1}))
	_, cjs := connectAs(t, srv.ClientURL(), cluster.SeedFile(dir, cluster.RoleCoordinator))
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: time.Minute})
	remote, err := d.Model(slowEcho{}.Identity())
	require.NoError(t, err)

	const calls = 8
	answers := make([]string, calls)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			prompt := fmt.Sprintf("question %d", i)
			r, err := remote.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)})
			errs[i] = err
			if err == nil {
				answers[i] = r.Choices[0].Content
			}
		})
	}
	wg.Wait()
	for i := range calls {
		require.NoError(t, errs[i], "call %d", i)
		assert.Contains(t, answers[i], fmt.Sprintf("question %d", i))
	}
	assert.GreaterOrEqual(t, d.Stats().Published, int64(calls), "one job a call: more than the key's bound at once")
}

// followHighWater reads st's bytes every 20 ms until ctx ends, keeping in
// most the largest it saw.
func followHighWater(ctx context.Context, st jetstream.Stream, most *atomic.Uint64) {
	for ctx.Err() == nil {
		if info, err := st.Info(ctx); err == nil && info.State.Bytes > most.Load() {
			most.Store(info.State.Bytes)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
