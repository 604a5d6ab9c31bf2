package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seeds are the credentials of an engine's attack scenario.
type seeds struct{ coord, worker, rogue, admin string }

// TestEngineOwnsItsResources: on the embedded engine, no client role can
// create, update or delete a shared stream, a consumer or the lease
// bucket, nor read the job stream or list the engine (issue 35, attacks
// 1, 4 and 6); a run beside a rogue that tried them all has the winners
// of an undisturbed run; after a restart the rogue still cannot squat.
func TestEngineOwnsItsResources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	store := t.TempDir()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: store, Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	s := seeds{
		coord: cluster.SeedFile(dir, cluster.RoleCoordinator), worker: cluster.SeedFile(dir, cluster.RoleWorker),
		rogue: cluster.SeedFile(dir, cluster.RoleWorker), admin: cluster.SeedFile(dir, cluster.RoleAdmin),
	}
	url := srv.ClientURL()
	t.Run("attacks", func(t *testing.T) { ownedScenario(t, url, s) })

	// A restart (the job stream lives in memory): the engine provisions
	// again before it lets a client in, so the rogue finds the stream
	// there, with mdap's settings, and still may not change it.
	srv.Shutdown()
	srv2, err := cluster.StartServer(cluster.ServerConfig{Addr: url[len("nats://"):], StoreDir: store, Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv2.Shutdown)
	_, rjs := connectAs(t, url, s.rogue)
	squat(t, rjs)
	_, ajs := connectAs(t, url, s.admin)
	assertMdapStreams(t, ajs)
}

// squat tries, as a worker, what attack 1 did: create the job stream
// with a RePublish of every job to the rogue; then checks that it failed.
func squat(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: cluster.JobsStream, Subjects: []string{"mdap.jobs.>"}, Storage: jetstream.MemoryStorage,
		RePublish: &jetstream.RePublish{Source: ">", Destination: "_INBOX_rogue.>"},
	})
	assert.Error(t, err, "a worker creates or updates the job stream")
}

// assertMdapStreams checks, with the admin's rights, that the shared
// streams have mdap's settings: nobody added a RePublish, a transform, a
// source or a mirror.
func assertMdapStreams(t *testing.T, ajs jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range []string{cluster.JobsStream, cluster.RepliesStream, "KV_" + cluster.LeaseBucket} {
		st, err := ajs.Stream(ctx, name)
		require.NoError(t, err, name)
		c := st.CachedInfo().Config
		assert.Nil(t, c.RePublish, name)
		if name == cluster.RepliesStream {
			// mdap's own: the job's token dropped, nothing moved elsewhere.
			require.NotNil(t, c.SubjectTransform, name)
			assert.Equal(t, jetstream.SubjectTransformConfig{Source: "mdap.replies.*.*.*", Destination: "mdap.replies.{{wildcard(1)}}.w.{{wildcard(3)}}"}, *c.SubjectTransform, name)
		} else {
			assert.Nil(t, c.SubjectTransform, name)
		}
		assert.Nil(t, c.Mirror, name)
		assert.Empty(t, c.Sources, name)
		assert.False(t, c.Sealed, name)
	}
	st, err := ajs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	for _, subj := range st.CachedInfo().Config.Subjects {
		assert.Regexp(t, `^mdap\.jobs\.(_|[a-z0-9-]+\.\*)$`, subj, "the jobs of the routes served only")
	}
	st, err = ajs.Stream(ctx, cluster.RepliesStream)
	require.NoError(t, err)
	for _, subj := range st.CachedInfo().Config.Subjects {
		assert.Regexp(t, `^mdap\.replies\.(_|[0-9a-f]{32}\.\*\.\*)$`, subj, "the replies of the Drawers the engine made a consumer for only")
	}
}

// ownedScenario: see TestEngineOwnsItsResources; url is an engine
// provisioned by the admin of s.
func ownedScenario(t *testing.T, url string, s seeds) {
	ctx := context.Background()
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 4, cfg)

	_, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4, AckWait: time.Hour, MaxDeliver: 1})
	runWorker(t, worker)
	_, rjs := connectAs(t, url, s.rogue)
	cnc, cjs := connectAs(t, url, s.coord)
	_, ajs := connectAs(t, url, s.admin)
	route := cluster.RouteToken(worker.Route())
	// A job on a route nobody pulls: it stays, for a reader and a purger.
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	probe, err := cjs.Publish(pctx, idleRouteSubject(t, ajs, cnc), []byte(`{}`))
	require.NoError(t, err)

	// Every attack at once, each refused (a refused JetStream request
	// gets no answer: each waits out its own short context).
	type attack struct {
		name string
		try  func(context.Context) error
	}
	evilReplies := jetstream.StreamConfig{Name: cluster.RepliesStream, Subjects: []string{"mdap.replies.>", "evil.>"},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "evil.>", Destination: "mdap.replies.>"}, Storage: jetstream.MemoryStorage}
	nowhere := jetstream.ConsumerConfig{Durable: "w-" + route, FilterSubject: "mdap.jobs.nowhere", AckPolicy: jetstream.AckExplicitPolicy, MaxDeliver: 1}
	attacks := []attack{
		{"worker squats the job stream", func(c context.Context) error {
			_, err := rjs.CreateStream(c, jetstream.StreamConfig{Name: cluster.JobsStream, Subjects: []string{"mdap.jobs.>"}})
			return err
		}},
		{"worker republishes the job stream", func(c context.Context) error {
			_, err := rjs.UpdateStream(c, jetstream.StreamConfig{Name: cluster.JobsStream, Subjects: []string{"mdap.jobs.>"},
				RePublish: &jetstream.RePublish{Source: ">", Destination: "rogue.>"}, Storage: jetstream.MemoryStorage})
			return err
		}},
		{"worker rewrites the route's consumer", func(c context.Context) error {
			_, err := rjs.CreateOrUpdateConsumer(c, cluster.JobsStream, nowhere)
			return err
		}},
		{"worker deletes the route's consumer", func(c context.Context) error {
			return rjs.DeleteConsumer(c, cluster.JobsStream, "w-"+route)
		}},
		{"worker deletes the reply stream", func(c context.Context) error { return rjs.DeleteStream(c, cluster.RepliesStream) }},
		{"worker makes the lease bucket", func(c context.Context) error {
			_, err := rjs.CreateOrUpdateKeyValue(c, jetstream.KeyValueConfig{Bucket: cluster.LeaseBucket})
			return err
		}},
		{"coordinator transforms into the reply stream", func(c context.Context) error {
			_, err := cjs.UpdateStream(c, evilReplies)
			return err
		}},
		{"coordinator rewrites the route's consumer", func(c context.Context) error {
			_, err := cjs.CreateOrUpdateConsumer(c, cluster.JobsStream, nowhere)
			return err
		}},
		{"coordinator reads a job", func(c context.Context) error {
			st, err := cjs.Stream(c, cluster.JobsStream)
			if err != nil {
				return err
			}
			_, err = st.GetMsg(c, probe.Sequence)
			return err
		}},
		{"coordinator purges the job stream", func(c context.Context) error {
			st, err := cjs.Stream(c, cluster.JobsStream)
			if err != nil {
				return err
			}
			return st.Purge(c)
		}},
		{"coordinator copies every job into a stream of its own", func(c context.Context) error {
			_, err := cjs.CreateStream(c, jetstream.StreamConfig{Name: "MDAP_JOURNAL_spy", Subjects: []string{"mdap.journal.spy"},
				Sources: []*jetstream.StreamSource{{Name: cluster.JobsStream}}})
			return err
		}},
		{"coordinator republishes into the reply stream", func(c context.Context) error {
			_, err := cjs.CreateStream(c, jetstream.StreamConfig{Name: "MDAP_JOURNAL_evil", Subjects: []string{"mdap.journal.evil"},
				RePublish: &jetstream.RePublish{Source: ">", Destination: "mdap.replies.x.y"}})
			return err
		}},
		{"coordinator deletes the reply stream", func(c context.Context) error { return cjs.DeleteStream(c, cluster.RepliesStream) }},
		{"coordinator lists the engine", func(c context.Context) error {
			names := cjs.StreamNames(c)
			for range names.Name() {
			}
			return names.Err()
		}},
		{"coordinator rewrites the lease bucket", func(c context.Context) error {
			_, err := cjs.CreateOrUpdateKeyValue(c, jetstream.KeyValueConfig{Bucket: cluster.LeaseBucket, TTL: time.Hour})
			return err
		}},
	}
	var wg sync.WaitGroup
	errs := make([]error, len(attacks))
	for i, a := range attacks {
		wg.Go(func() {
			c, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			errs[i] = a.try(c)
		})
	}
	wg.Wait()
	for i, a := range attacks {
		assert.Error(t, errs[i], a.name)
	}
	assertMdapStreams(t, ajs)
	jobs, err := ajs.Stream(pctx, cluster.JobsStream)
	require.NoError(t, err)
	_, err = jobs.GetMsg(pctx, probe.Sequence)
	assert.NoError(t, err, "the job stream was not purged")
	leases, err := ajs.KeyValue(pctx, cluster.LeaseBucket)
	require.NoError(t, err)
	lst, err := leases.Status(pctx)
	require.NoError(t, err)
	assert.Equal(t, cluster.DefaultLeaseTTL, lst.TTL(), "the lease bucket's settings")

	for _, name := range []string{"MDAP_JOURNAL_spy", "MDAP_JOURNAL_evil"} {
		_, err := ajs.Stream(pctx, name)
		assert.ErrorIs(t, err, jetstream.ErrStreamNotFound, name)
	}

	// What a coordinator needs, the engine makes for it: a journal, a
	// task queue with its results.
	journalAndQueueWork(t, pctx, cjs, "owned")

	// The route's consumer has the engine's settings, not the worker's
	// (AckWait 1h, MaxDeliver 1 asked), nor a rogue's.
	actx, acancel := context.WithTimeout(ctx, 10*time.Second)
	defer acancel()
	cons, err := ajs.Consumer(actx, cluster.JobsStream, "w-"+route)
	require.NoError(t, err)
	cc := cons.CachedInfo().Config
	assert.Equal(t, "mdap.jobs."+route+".*", cc.FilterSubject)
	assert.Equal(t, cluster.DefaultAckWait, cc.AckWait)
	assert.Equal(t, cluster.DefaultMaxDeliver, cc.MaxDeliver)

	// The run: the winners of an undisturbed run.
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	_, gotSteps := solveHanoi(t, remote, 4, cfg)
	assert.Equal(t, wantSteps, gotSteps)
	assert.Zero(t, d.Stats().Forged)
}

// journalAndQueueWork: a coordinator on js makes run's journal and task
// queue, publishes a task, takes it, completes it and reads its result.
func journalAndQueueWork(t *testing.T, ctx context.Context, js jetstream.JetStream, run string) {
	t.Helper()
	solve := func(j *journal.Journal) {
		t.Helper()
		task, err := hanoi.New(2)
		require.NoError(t, err)
		_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 1}}, Model: simModel(t, 1), Journal: j}).Solve(ctx, task)
		require.NoError(t, err)
		require.NoError(t, j.Close())
		assert.True(t, task.Solved())
	}
	// A journal written, then read back whole (a consumer filtered to
	// its subject, a direct get of its last line).
	j, err := cluster.CreateJournal(ctx, js, run, cluster.JournalConfig{})
	require.NoError(t, err)
	solve(j)
	j, err = cluster.OpenJournal(ctx, js, run, cluster.JournalConfig{})
	require.NoError(t, err)
	solve(j)
	// A task journal of its batch, the same.
	for _, resume := range []bool{false, true} {
		tj, resumed, err := cluster.TaskJournal(ctx, js, run, "t1", cluster.JournalConfig{})
		require.NoError(t, err)
		assert.Equal(t, resume, resumed)
		solve(tj)
	}
	q, err := cluster.OpenTaskQueue(ctx, js, run, cluster.TaskQueueConfig{})
	require.NoError(t, err)
	require.NoError(t, q.Publish(ctx, "t1", []byte("task")))
	claim, err := q.Take(ctx)
	require.NoError(t, err)
	require.NoError(t, claim.Complete(ctx, []byte("done")))
	res, ok, err := q.Result(ctx, "t1")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "done", string(res))
	all, err := q.Results(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string][]byte{"t1": []byte("done")}, all)
}
