package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestTheSharedLeaseBucketIsBounded: the shared lease bucket has a bound
// on its bytes (SharedLeaseBytes) and on one lease (MaxOwnerBytes), so its
// holders cannot take the store's disk: a lease over the bound is refused
// by the server, and a journal asked with an Owner over it is refused
// before the engine is asked (ErrConfig naming it).
func TestTheSharedLeaseBucketIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	st, err := ajs.Stream(ctx, "KV_"+cluster.LeaseBucket)
	require.NoError(t, err)
	assert.Equal(t, cluster.SharedLeaseBytes, st.CachedInfo().Config.MaxBytes)
	assert.Less(t, st.CachedInfo().Config.MaxMsgSize, int32(2*cluster.MaxOwnerBytes))
	_, err = cjs.Publish(ctx, "$KV."+cluster.LeaseBucket+".big", bytes.Repeat([]byte("x"), 2*cluster.MaxOwnerBytes))
	require.Error(t, err, "a lease over the bound")
	assert.Contains(t, err.Error(), "maximum")
	_, err = cluster.CreateJournal(ctx, cjs, "owner", cluster.JournalConfig{Owner: string(bytes.Repeat([]byte("o"), cluster.MaxOwnerBytes+1))})
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.Contains(t, err.Error(), "Owner")
	j, err := cluster.CreateJournal(ctx, cjs, "owner", cluster.JournalConfig{Owner: string(bytes.Repeat([]byte("o"), cluster.MaxOwnerBytes))})
	require.NoError(t, err, "an Owner of the bound")
	require.NoError(t, j.Close())
}

// Shares of runBudget, the budget of each run key in these tests: its
// task stream and result bucket an eighth each, its lease bucket a
// thirty-second (at least 16 KiB).
const (
	runQueueShare = runBudget / 8
	runLeaseShare = 16 << 10
)

// floodSubjects publishes messages on patterns (each with one %d, a new
// subject each time) as the holder of js may, raw, messages of 4 KiB until
// refused, then of 256 bytes, then of 16, until each pattern is refused.
// It returns the bytes stored (payloads).
func floodSubjects(t *testing.T, ctx context.Context, js jetstream.JetStream, patterns ...string) int {
	t.Helper()
	stored, i := 0, 0
	for _, p := range patterns {
		for _, size := range []int{4 << 10, 256, 16} {
			data := bytes.Repeat([]byte("x"), size)
			var err error
			for ; err == nil && stored < 8*runBudget; i++ {
				c, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err = js.Publish(c, fmt.Sprintf(p, i), data)
				cancel()
				if err == nil {
					stored += size
				}
			}
			t.Logf("flood on %s with %d bytes refused after %d bytes stored: %v", p, size, stored, err)
			if !strings.Contains(fmt.Sprint(err), "maximum") {
				break // refused, not full: not this key's
			}
		}
	}
	return stored
}

// startBudgetServer starts an embedded engine with roles whose run keys'
// budget is runBudget, and returns its URL, the credentials of its run
// keys victim and thief and the admin, and the credentials folder.
func startBudgetServer(t *testing.T) (string, tenantSeeds, string) {
	t.Helper()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{RunKeyBytes: runBudget}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL(), s, dir
}

// thiefFloods are the budget seeds of the embedded tests: the thief's
// key floods, the victim's goes on.
func thiefFloods(s tenantSeeds, dir string) budgetSeeds {
	return budgetSeeds{flooder: s.thief, flooderRun: "thief", other: s.victim, otherRun: "victim", admin: s.admin,
		coord: cluster.SeedFile(dir, cluster.RoleCoordinator)}
}

// solveBatchAs solves a batch of n small tasks on queue (a run key's
// run) as the holder of js, each task's samples from a local simulated
// model, its task, result, lease and journal on the engine. The tasks
// are new ones each call.
func solveBatchAs(ctx context.Context, t *testing.T, js jetstream.JetStream, queue string, n int) (batch.Summary, error) {
	t.Helper()
	dir := t.TempDir()
	var lines strings.Builder
	for i := range n {
		fmt.Fprintf(&lines, `{"id": "%s%d-%d", "hanoi": {"disks": 2}, "seed": %d}`+"\n", queue, i, time.Now().UnixNano(), i+1)
	}
	jobs, err := batch.ReadJobs(strings.NewReader(lines.String()), dir)
	require.NoError(t, err)
	runner := batch.Runner{Build: (&batch.Builtin{Config: maker.Config{Vote: vote.Config{K: 1}}, Model: func(job batch.Job, o sim.Oracle, seed uint64) (llms.Model, error) {
		c := sim.DefaultConfig()
		c.Seed, c.P = seed, 0.99
		return sim.New(o, c)
	}}).Build}
	store, err := batch.OpenStore(filepath.Join(dir, "results.jsonl"), "")
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	return cluster.SolveBatch(ctx, js, cluster.BatchConfig{Queue: queue, Jobs: jobs, Runner: runner, Store: store, Concurrency: 2})
}

// queueBudgetScenario: a run key (the flooder) fills a share of its own
// budget, the stream or bucket share, flooding raw on every pattern of
// subjects of that kind it may (its own stream's or bucket's, and the
// shared one's its key was once allowed: see tasksFlood); it
// stores no more than its share, and another run key's batch is solved
// whole, while the flooder's own batch fails naming the share that is
// full (ErrBudgetFull).
func queueBudgetScenario(t *testing.T, url string, s budgetSeeds, share string, patterns ...string) {
	_, tjs := connectAs(t, url, s.flooder)
	_, vjs := connectAs(t, url, s.other)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The flooder's queue, as its batch opens it, then the flood.
	_, err := cluster.OpenTaskQueue(ctx, tjs, s.flooderRun, cluster.TaskQueueConfig{})
	require.NoError(t, err)
	patterns = slices.Clone(patterns)
	for i, p := range patterns {
		patterns[i] = ofRun(p, s.flooderRun)
	}
	stored := floodSubjects(t, ctx, tjs, patterns...)
	assert.LessOrEqual(t, stored, runQueueShare, "the flooder stored no more than its share")
	assert.Greater(t, stored, runQueueShare*3/4, "the flooder filled its share")

	sum, err := solveBatchAs(ctx, t, vjs, s.otherRun, 4)
	require.NoError(t, err, "another run key's batch")
	assert.Equal(t, 4, sum.Solved, "%+v", sum)

	began := time.Now()
	_, err = solveBatchAs(ctx, t, tjs, s.flooderRun, 2)
	require.ErrorIs(t, err, cluster.ErrBudgetFull)
	t.Logf("the flooder's own batch: %v", err)
	assert.Contains(t, err.Error(), ofRun(share, s.flooderRun))
	assert.Contains(t, err.Error(), "budget")
	assert.Contains(t, err.Error(), "maker nats run add "+s.flooderRun+" --bytes")
	assert.Less(t, time.Since(began), 30*time.Second, "fails fast")
}

// TestARunKeysTasksFillOnlyItsOwnBudget: a run key queuing tasks until
// its task stream is full (MDAP_RUNQ_<run>, an eighth of its budget)
// fills its own only: its batch fails publishing its tasks, naming the
// stream and the budget, and another run key's batch completes. It may
// not queue on the shared MDAP_TASKS at all.
func TestARunKeysTasksFillOnlyItsOwnBudget(t *testing.T) {
	t.Parallel()
	url, s, dir := startBudgetServer(t)
	queueBudgetScenario(t, url, thiefFloods(s, dir), tasksShare, tasksFlood...)
}

// The shares a flood fills and the subjects it floods: <run> is the
// flooder's run (ofRun), %d a new subject each time.
const (
	tasksShare   = cluster.RunQueuePrefix + "<run>"
	resultsShare = cluster.RunResultsPrefix + "<run>"
	leasesShare  = cluster.RunLeasesPrefix + "<run>"
)

var (
	tasksFlood   = []string{"mdap.queues.<run>.f%d", "mdap.run.<run>.tasks.f%d"}
	resultsFlood = []string{"$KV." + cluster.ResultsBucket + ".<run>.f%d", "$KV." + resultsShare + ".<run>.f%d"}
	leasesFlood  = []string{"$KV." + cluster.LeaseBucket + ".<run>.f%d", "$KV." + leasesShare + ".<run>.f%d"}
)

// ofRun is pattern with <run> replaced by run.
func ofRun(pattern, run string) string { return strings.ReplaceAll(pattern, "<run>", run) }

// TestARunKeysResultsFillOnlyItsOwnBudget: the same for results: a run
// key writing results until its result bucket is full
// (MDAP_RUNRESULTS_<run>) fails its own batch at its first result, naming
// the bucket and the budget; another run key's batch completes. It may
// not write on the shared MDAP_RESULTS at all.
func TestARunKeysResultsFillOnlyItsOwnBudget(t *testing.T) {
	t.Parallel()
	url, s, dir := startBudgetServer(t)
	queueBudgetScenario(t, url, thiefFloods(s, dir), resultsShare, resultsFlood...)
}

// TestARunKeyFloodingLeasesCannotStopAnotherRunsLease: a run key that
// takes lease keys until its lease bucket is full (MDAP_RUNLEASES_<run>,
// a thirty-second of its budget) stops its own next journal, which fails
// naming the bucket and the budget, and no one else's: another run key
// and the shared coordinator take their leases and journal their runs.
func TestARunKeyFloodingLeasesCannotStopAnotherRunsLease(t *testing.T) {
	t.Parallel()
	url, s, dir := startBudgetServer(t)
	leaseBudgetScenario(t, url, thiefFloods(s, dir))
}

// leaseBudgetScenario: the flooder fills its lease bucket; its own next
// journal fails naming it, and the other run key's and the shared
// coordinator's take their leases and journal (see
// TestARunKeyFloodingLeasesCannotStopAnotherRunsLease).
func leaseBudgetScenario(t *testing.T, url string, s budgetSeeds) {
	_, tjs := connectAs(t, url, s.flooder)
	_, vjs := connectAs(t, url, s.other)
	_, cjs := connectAs(t, url, s.coord)
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nonce := fmt.Sprint(time.Now().UnixNano())
	j, _, err := cluster.OpenOrCreateJournal(ctx, tjs, s.flooderRun, cluster.JournalConfig{})
	require.NoError(t, err, "the flooder's own journal, made with its lease bucket")
	require.NoError(t, j.Close())
	// The lease bucket's TTL (20 s) clears the flood: what follows is
	// within it.
	flooded := time.Now()
	patterns := slices.Clone(leasesFlood)
	for i, p := range patterns {
		patterns[i] = ofRun(p, s.flooderRun)
	}
	stored := floodSubjects(t, ctx, tjs, patterns...)
	assert.LessOrEqual(t, stored, runLeaseShare, "the flooder stored no more than its share")
	assert.Greater(t, stored, runLeaseShare/2, "the flooder filled its share")

	_, _, err = cluster.TaskJournal(ctx, tjs, s.flooderRun, "t"+nonce, cluster.JournalConfig{})
	require.ErrorIs(t, err, cluster.ErrBudgetFull, "the flooder's own next lease")
	t.Logf("the flooder's own next journal: %v", err)
	assert.Contains(t, err.Error(), cluster.RunLeaseBucket(s.flooderRun))
	assert.Contains(t, err.Error(), "budget")

	for _, c := range []struct {
		js          jetstream.JetStream
		run, bucket string
	}{{vjs, s.otherRun, cluster.RunLeaseBucket(s.otherRun)}, {cjs, "shared" + nonce, cluster.LeaseBucket}} {
		j, _, err := cluster.TaskJournal(ctx, c.js, c.run, "t"+nonce, cluster.JournalConfig{Owner: "the " + c.run})
		require.NoError(t, err, "%s takes its lease", c.run)
		kv, err := ajs.KeyValue(ctx, c.bucket)
		require.NoError(t, err)
		e, err := kv.Get(ctx, c.run+".t"+nonce)
		require.NoError(t, err)
		assert.Equal(t, "the "+c.run, string(e.Value()))
		task, err := hanoi.New(2)
		require.NoError(t, err)
		_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 1}}, Model: simModel(t, 1), Journal: j}).Solve(ctx, task)
		require.NoError(t, err, "%s journals its run", c.run)
		require.NoError(t, j.Close())
	}
	assert.Less(t, time.Since(flooded), 15*time.Second, "within the flood's TTL")
}

// TestARunKeysQueueOnTheSharedStreamIsNotLost: a run key's task queue
// left on the shared MDAP_TASKS and MDAP_RESULTS (written before run keys
// had their own) is refused by the run key with ErrOldLayout, naming the
// way to move it, never started anew beside it; the admin removes it,
// then the run key's queue is on its own stream and bucket, which the
// shared coordinator is refused, List shows with their bytes, and the
// admin's RemoveRun deletes.
func TestARunKeysQueueOnTheSharedStreamIsNotLost(t *testing.T) {
	t.Parallel()
	url, s, dir := startBudgetServer(t)
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	_, vjs := connectAs(t, url, s.victim)
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The shared coordinator keeps queues on the shared stream and
	// bucket: the run's queue as a run key kept it before.
	q, err := cluster.OpenTaskQueue(ctx, cjs, "victim", cluster.TaskQueueConfig{})
	require.NoError(t, err)
	for _, id := range []string{"t1", "t2"} {
		require.NoError(t, q.Publish(ctx, id, []byte("task")))
	}
	c, err := q.Take(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Complete(ctx, []byte("done")))
	_, err = cluster.OpenTaskQueue(ctx, vjs, "victim", cluster.TaskQueueConfig{})
	require.ErrorIs(t, err, cluster.ErrOldLayout)
	t.Logf("the run key's queue left on the shared stream: %v", err)
	assert.Contains(t, err.Error(), cluster.TasksStream)
	assert.Contains(t, err.Error(), "1 tasks and 1 results")
	assert.Contains(t, err.Error(), "maker nats rm victim")
	_, err = solveBatchAs(ctx, t, vjs, "victim", 1)
	require.ErrorIs(t, err, cluster.ErrOldLayout, "its batch too")
	removed, err := cluster.RemoveRun(ctx, ajs, "victim")
	require.NoError(t, err)
	assert.Equal(t, []string{"task queue victim", "results of victim"}, removed)

	// Now on its own stream and bucket.
	sum, err := solveBatchAs(ctx, t, vjs, "victim", 3)
	require.NoError(t, err)
	assert.Equal(t, 3, sum.Solved, "%+v", sum)
	vq, err := cluster.OpenTaskQueue(ctx, vjs, "victim", cluster.TaskQueueConfig{})
	require.NoError(t, err)
	require.NoError(t, vq.Publish(ctx, "left", []byte("a task left queued")))
	results, err := vq.Results(ctx)
	require.NoError(t, err)
	assert.Len(t, results, 3)
	st, err := ajs.Stream(ctx, cluster.RunQueueStream("victim"))
	require.NoError(t, err)
	assert.Equal(t, int64(runQueueShare), st.CachedInfo().Config.MaxBytes, "an eighth of the run key's budget")
	kv, err := ajs.Stream(ctx, "KV_"+cluster.RunResultsBucket("victim"))
	require.NoError(t, err)
	assert.Equal(t, int64(runQueueShare), kv.CachedInfo().Config.MaxBytes)
	lk, err := ajs.Stream(ctx, "KV_"+cluster.RunLeaseBucket("victim"))
	require.NoError(t, err)
	assert.Equal(t, int64(runLeaseShare), lk.CachedInfo().Config.MaxBytes)
	for _, shared := range []string{cluster.TasksStream, "KV_" + cluster.ResultsBucket} {
		sst, err := ajs.Stream(ctx, shared)
		require.NoError(t, err)
		info, err := sst.Info(ctx, jetstream.WithSubjectFilter(">"))
		require.NoError(t, err)
		assert.Empty(t, info.State.Subjects, "nothing of the run key's on %s", shared)
	}
	_, err = cluster.OpenTaskQueue(ctx, cjs, "victim", cluster.TaskQueueConfig{})
	require.ErrorIs(t, err, cluster.ErrAuth, "the shared coordinator may not use a run key's queue")
	assert.Contains(t, err.Error(), "maker nats run add victim")

	left, err := cluster.List(ctx, ajs)
	require.NoError(t, err)
	var queues []cluster.Leftover
	for _, l := range left {
		if l.Kind == "tasks" {
			queues = append(queues, l)
		}
	}
	require.Len(t, queues, 1)
	assert.Equal(t, "victim", queues[0].Name)
	assert.Equal(t, uint64(1), queues[0].Messages, "the task left queued")
	assert.Equal(t, uint64(3), queues[0].Results)
	assert.Positive(t, queues[0].Bytes, "its share used")

	removed, err = cluster.RemoveRun(ctx, ajs, "victim")
	require.NoError(t, err)
	assert.Contains(t, removed, "task queue victim")
	assert.Contains(t, removed, "results of victim")
	for _, name := range []string{cluster.RunQueueStream("victim"), "KV_" + cluster.RunResultsBucket("victim"), cluster.RunStream("victim"), "KV_" + cluster.RunLeaseBucket("victim")} {
		_, err = ajs.Stream(ctx, name)
		require.ErrorIs(t, err, jetstream.ErrStreamNotFound, "%s deleted: its reservation freed", name)
	}
}
