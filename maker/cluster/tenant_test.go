package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tenantSeeds are the credentials of a tenants scenario: the
// coordinators of the runs "victim" and "thief" (AddRunCoordinator), a
// worker and the admin.
type tenantSeeds struct{ victim, thief, worker, admin string }

// issueTenants issues the run coordinators of the tenants scenario in the
// credentials folder dir (which holds the roles' keys) and returns the
// keys a server accepts.
func issueTenants(t *testing.T, dir string) (cluster.RoleKeys, tenantSeeds) {
	t.Helper()
	_, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	victim, err := cluster.AddRunCoordinator(dir, "victim")
	require.NoError(t, err)
	thief, err := cluster.AddRunCoordinator(dir, "thief")
	require.NoError(t, err)
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	return keys, tenantSeeds{victim: victim, thief: thief,
		worker: cluster.SeedFile(dir, cluster.RoleWorker), admin: cluster.SeedFile(dir, cluster.RoleAdmin)}
}

// tenantsAndAWorker starts an engine with roles whose credentials are
// issueTenants' and a worker's (w1): its URL and the seeds.
func tenantsAndAWorker(t *testing.T) (url string, s tenantSeeds, worker string) {
	t.Helper()
	return tenantsAndAWorkerOn(t, cluster.ServerConfig{})
}

// tenantsAndAWorkerOn is tenantsAndAWorker on an engine of cfg (its
// address, store and roles filled in).
func tenantsAndAWorkerOn(t *testing.T, cfg cluster.ServerConfig) (url string, s tenantSeeds, worker string) {
	t.Helper()
	dir := t.TempDir()
	_, s = issueTenants(t, dir)
	worker, err := cluster.AddWorker(dir, "w1")
	require.NoError(t, err)
	cfg.Addr, cfg.StoreDir = "127.0.0.1:0", t.TempDir()
	cfg.Roles, _, err = cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cfg)
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL(), s, worker
}

// TestRunCoordinatorsAreTenants: on the embedded engine, the coordinator
// of one run cannot touch another run's journal, lease or task queue, nor
// anything a coordinator cannot (issue 35, attack 4); the victim's run
// has the winners of an undisturbed run and its journal is intact.
func TestRunCoordinatorsAreTenants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	tenantScenario(t, srv.ClientURL(), s)
}

func tenantScenario(t *testing.T, url string, s tenantSeeds) {
	ctx := context.Background()
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 4, cfg)

	_, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	vnc0, vjs := connectAs(t, url, s.victim)
	tnc, tjs := connectAs(t, url, s.thief)
	_, ajs := connectAs(t, url, s.admin)

	// The victim's run: a journal (holding its lease), a task queue
	// with a task, and samples drawn through the engine, under attack.
	// tctx only keeps a hung engine from hanging the test: it spans the
	// whole scenario, the victim's run included, which took 42 s in a
	// run slowed three times (a bound of 30 s failed its last reads).
	// What must be quick has bounds of its own (each attack's 2 s, the
	// refusal's 5 s).
	tctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer tcancel()
	vq, err := cluster.OpenTaskQueue(tctx, vjs, "victim", cluster.TaskQueueConfig{})
	require.NoError(t, err)
	require.NoError(t, vq.Publish(tctx, "t1", []byte("the victim's task")))
	j, err := cluster.CreateJournal(tctx, vjs, "victim", cluster.JournalConfig{Owner: "the victim"})
	require.NoError(t, err)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	var gotSteps []step
	var solveErr error
	var run sync.WaitGroup
	run.Go(func() {
		task, err := hanoi.New(4)
		if err != nil {
			solveErr = err
			return
		}
		sv := &maker.Solver{
			Config:  maker.Config{Vote: cfg},
			Model:   remote,
			Journal: j,
			Progress: func(e maker.Event) {
				r := e.Record
				gotSteps = append(gotSteps, step{Winner: r.Winner.Value, Key: r.Key, Votes: r.Votes, Valid: r.Valid, Flagged: r.Flagged, Errors: r.Errors, Flags: r.Flags})
			},
		}
		_, solveErr = sv.Solve(ctx, task)
	})

	// A job of the victim's on a route nobody pulls, for a thief to
	// delete: only its lease lets the engine withdraw it.
	probe := cluster.Job{Version: cluster.WireVersion, ID: "probe1", Route: "probe", Lease: "the victim's secret",
		ReplyTo: "mdap.replies.0123456789abcdef0123456789abcdef.probe1", Prompts: [][]cluster.Message{{}}, Samples: []cluster.Sample{{}}}
	probeData := jsonMarshal(t, probe)
	probeAck, err := vjs.Publish(tctx, idleRouteSubject(t, ajs, vnc0), probeData)
	require.NoError(t, err)
	withdraw := func(c context.Context, nc *nats.Conn, lease string) error {
		m, err := nc.RequestWithContext(c, "mdap.engine.withdraw", jsonMarshal(t, map[string]any{"name": probe.ID, "seq": probeAck.Sequence, "lease": lease}))
		if err != nil {
			return err
		}
		var resp struct{ Error string }
		if err := jsonUnmarshal(m.Data, &resp); err != nil {
			return err
		}
		if resp.Error != "" {
			return errors.New(resp.Error)
		}
		return nil
	}

	type attack struct {
		name string
		try  func(context.Context) error
	}
	stream := func(c context.Context, name string) (jetstream.Stream, error) { return tjs.Stream(c, name) }
	attacks := []attack{
		{"open the victim's journal", func(c context.Context) error {
			_, err := cluster.OpenJournal(c, tjs, "victim", cluster.JournalConfig{})
			return err
		}},
		{"read the victim's journal (message-get)", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.STREAM.MSG.GET."+cluster.JournalsStream, []byte(`{"seq":1}`))
			return err
		}},
		{"read the victim's journal (direct get by sequence)", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.DIRECT.GET."+cluster.JournalsStream, []byte(`{"seq":1}`))
			return err
		}},
		{"read the victim's journal (direct get of its last line)", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.DIRECT.GET."+cluster.JournalsStream+".mdap.journals.victim", nil)
			return err
		}},
		{"consume the victim's journal", func(c context.Context) error {
			_, err := tjs.OrderedConsumer(c, cluster.JournalsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"mdap.journals.victim"}})
			return err
		}},
		{"consume every journal", func(c context.Context) error {
			_, err := tjs.OrderedConsumer(c, cluster.JournalsStream, jetstream.OrderedConsumerConfig{})
			return err
		}},
		{"consume every journal by a wildcard", func(c context.Context) error {
			_, err := tjs.OrderedConsumer(c, cluster.JournalsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"mdap.journals.>"}})
			return err
		}},
		{"consume the victim's journal through a filter naming the thief", func(c context.Context) error {
			m, err := tnc.RequestWithContext(c, "$JS.API.CONSUMER.CREATE."+cluster.JournalsStream+".sneak.mdap.journals.thief",
				[]byte(`{"stream_name":"`+cluster.JournalsStream+`","config":{"name":"sneak","filter_subject":"mdap.journals.victim","ack_policy":"none"}}`))
			if err != nil {
				return err
			}
			var resp struct{ Error *struct{ Description string } }
			if err := jsonUnmarshal(m.Data, &resp); err != nil {
				return err
			}
			if resp.Error != nil {
				return errors.New(resp.Error.Description)
			}
			return nil
		}},
		{"read the victim's own journal stream (direct get of its last line)", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.DIRECT.GET."+cluster.RunStream("victim")+".mdap.run.victim.journal", nil)
			return err
		}},
		{"consume the victim's own journal stream", func(c context.Context) error {
			_, err := tjs.OrderedConsumer(c, cluster.RunStream("victim"), jetstream.OrderedConsumerConfig{FilterSubjects: []string{"mdap.run.victim.journal"}})
			return err
		}},
		{"look at the victim's own journal stream", func(c context.Context) error {
			_, err := tjs.Stream(c, cluster.RunStream("victim"))
			return err
		}},
		{"write a line into the victim's own journal stream", func(c context.Context) error {
			_, err := tjs.Publish(c, "mdap.run.victim.journal", []byte(`{"forged":true}`))
			return err
		}},
		{"write a line into the victim's own stream under its batch", func(c context.Context) error {
			_, err := tjs.Publish(c, "mdap.run.victim.journal.t1", []byte(`{"forged":true}`))
			return err
		}},
		{"purge the victim's own journal stream", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.STREAM.PURGE."+cluster.RunStream("victim"), nil)
			return err
		}},
		{"raise its own budget", func(c context.Context) error {
			_, err := tjs.UpdateStream(c, jetstream.StreamConfig{Name: cluster.RunStream("thief"), Subjects: []string{"mdap.run.thief.journal", "mdap.run.thief.journal.>"}, MaxBytes: -1})
			return err
		}},
		{"write a line into the victim's journal", func(c context.Context) error {
			_, err := tjs.Publish(c, "mdap.journals.victim", []byte(`{"forged":true}`))
			return err
		}},
		{"write a line into a journal of the victim's batch", func(c context.Context) error {
			_, err := tjs.Publish(c, "mdap.journals.victim.t1", []byte(`{"forged":true}`))
			return err
		}},
		{"purge the victim's journal", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.STREAM.PURGE."+cluster.JournalsStream, []byte(`{"filter":"mdap.journals.victim"}`))
			return err
		}},
		{"delete a line of the victim's journal", func(c context.Context) error {
			st, err := stream(c, cluster.JournalsStream)
			if err != nil {
				return err
			}
			return st.DeleteMsg(c, 1)
		}},
		{"delete the journals", func(c context.Context) error {
			return tjs.DeleteStream(c, cluster.JournalsStream)
		}},
		{"create a stream", func(c context.Context) error {
			_, err := tjs.CreateStream(c, jetstream.StreamConfig{Name: "EVIL", Subjects: []string{"evil.>"}})
			return err
		}},
		{"update the journals' stream", func(c context.Context) error {
			_, err := tjs.UpdateStream(c, jetstream.StreamConfig{Name: cluster.JournalsStream, Subjects: []string{"mdap.journals.>", "evil.>"},
				SubjectTransform: &jetstream.SubjectTransformConfig{Source: "evil.>", Destination: "mdap.journals.>"}})
			return err
		}},
		{"purge the task queues", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.STREAM.PURGE."+cluster.TasksStream, []byte(`{"filter":"mdap.queues.victim.>"}`))
			return err
		}},
		{"purge the results", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.STREAM.PURGE.KV_"+cluster.ResultsBucket, nil)
			return err
		}},
		{"drop the victim's lease", func(c context.Context) error {
			_, err := tjs.Publish(c, "$KV."+cluster.LeaseBucket+".victim", nil, jetstream.WithMsgID("drop"))
			return err
		}},
		{"read the victim's lease", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.DIRECT.GET.KV_"+cluster.LeaseBucket+".$KV."+cluster.LeaseBucket+".victim", nil)
			return err
		}},
		{"ask the engine for the victim's journal", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "mdap.engine.journal.victim", []byte(`{"name":"victim","max_age":3600000000000}`))
			return err
		}},
		{"ask the engine for a journal by the unscoped subject", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "mdap.engine.journal", []byte(`{"name":"victim","max_age":3600000000000}`))
			return err
		}},
		{"open the victim's task queue", func(c context.Context) error {
			_, err := cluster.OpenTaskQueue(c, tjs, "victim", cluster.TaskQueueConfig{})
			return err
		}},
		{"take the victim's task", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.CONSUMER.MSG.NEXT."+cluster.TasksStream+".q_victim", []byte(`{"batch":1}`))
			return err
		}},
		{"queue a task into the victim's queue", func(c context.Context) error {
			_, err := tjs.Publish(c, "mdap.queues.victim.t9", []byte("forged"))
			return err
		}},
		{"redirect the victim's queue consumer", func(c context.Context) error {
			_, err := tjs.CreateOrUpdateConsumer(c, cluster.TasksStream, jetstream.ConsumerConfig{Durable: "q_victim", FilterSubject: "mdap.queues.thief.>", AckPolicy: jetstream.AckExplicitPolicy})
			return err
		}},
		{"delete the victim's queue consumer", func(c context.Context) error {
			return tjs.DeleteConsumer(c, cluster.TasksStream, "q_victim")
		}},
		{"ask the engine for the victim's queue", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "mdap.engine.tasks.victim", []byte(`{"name":"victim","max_age":3600000000000,"ack_wait":30000000000}`))
			return err
		}},
		{"write the victim's result", func(c context.Context) error {
			_, err := tjs.Publish(c, "$KV."+cluster.ResultsBucket+".victim.t1", []byte("forged"))
			return err
		}},
		{"read the victim's result", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.DIRECT.GET.KV_"+cluster.ResultsBucket+".$KV."+cluster.ResultsBucket+".victim.t1", nil)
			return err
		}},
		{"list the victim's results", func(c context.Context) error {
			_, err := tjs.OrderedConsumer(c, "KV_"+cluster.ResultsBucket, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"$KV." + cluster.ResultsBucket + ".victim.>"}})
			return err
		}},
		{"queue a task into the victim's own queue", func(c context.Context) error {
			_, err := tjs.Publish(c, "mdap.run.victim.tasks.t9", []byte("forged"))
			return err
		}},
		{"take the victim's task from its own queue", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.CONSUMER.MSG.NEXT."+cluster.RunQueueStream("victim")+".q_victim", []byte(`{"batch":1}`))
			return err
		}},
		{"look at the victim's own queue", func(c context.Context) error {
			_, err := tjs.Stream(c, cluster.RunQueueStream("victim"))
			return err
		}},
		{"purge the victim's own queue", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.STREAM.PURGE."+cluster.RunQueueStream("victim"), nil)
			return err
		}},
		{"ask the engine for the victim's own queue", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "mdap.engine.runtasks.victim", []byte(`{"name":"victim","max_age":3600000000000,"ack_wait":30000000000}`))
			return err
		}},
		{"write the victim's result into its own bucket", func(c context.Context) error {
			_, err := tjs.Publish(c, "$KV."+cluster.RunResultsBucket("victim")+".victim.t1", []byte("forged"))
			return err
		}},
		{"read the victim's result from its own bucket", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.DIRECT.GET.KV_"+cluster.RunResultsBucket("victim")+".$KV."+cluster.RunResultsBucket("victim")+".victim.t1", nil)
			return err
		}},
		{"drop the victim's lease in its own bucket", func(c context.Context) error {
			_, err := tjs.Publish(c, "$KV."+cluster.RunLeaseBucket("victim")+".victim", nil, jetstream.WithMsgID("drop-own"))
			return err
		}},
		{"read the victim's lease in its own bucket", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.DIRECT.GET.KV_"+cluster.RunLeaseBucket("victim")+".$KV."+cluster.RunLeaseBucket("victim")+".victim", nil)
			return err
		}},
		{"rewrite the victim's lease bucket", func(c context.Context) error {
			_, err := tjs.CreateOrUpdateKeyValue(c, jetstream.KeyValueConfig{Bucket: cluster.RunLeaseBucket("victim"), TTL: time.Hour})
			return err
		}},
		{"queue a task of its own on the shared queue", func(c context.Context) error {
			_, err := tjs.Publish(c, "mdap.queues.thief.t1", []byte("on the shared stream"))
			return err
		}},
		{"write a result of its own into the shared bucket", func(c context.Context) error {
			_, err := tjs.Publish(c, "$KV."+cluster.ResultsBucket+".thief.t1", []byte("on the shared bucket"))
			return err
		}},
		{"take a lease of its own in the shared bucket", func(c context.Context) error {
			_, err := tjs.Publish(c, "$KV."+cluster.LeaseBucket+".thief.x", []byte("on the shared bucket"))
			return err
		}},
		{"ask the engine for its own queue on the shared stream", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "mdap.engine.tasks.thief", []byte(`{"name":"thief","max_age":3600000000000,"ack_wait":30000000000}`))
			return err
		}},
		{"publish a reply into the victim's run", func(c context.Context) error {
			_, err := tjs.Publish(c, "mdap.replies.d1.j1", []byte(`{"v":2}`))
			return err
		}},
		{"read a job (message-get)", func(c context.Context) error {
			_, err := tnc.RequestWithContext(c, "$JS.API.STREAM.MSG.GET."+cluster.JobsStream, []byte(`{"seq":1}`))
			return err
		}},
		{"purge the job stream", func(c context.Context) error {
			st, err := stream(c, cluster.JobsStream)
			if err != nil {
				return err
			}
			return st.Purge(c)
		}},
		{"delete the reply stream", func(c context.Context) error { return tjs.DeleteStream(c, cluster.RepliesStream) }},
		{"update the reply stream", func(c context.Context) error {
			_, err := tjs.UpdateStream(c, jetstream.StreamConfig{Name: cluster.RepliesStream, Subjects: []string{"mdap.replies.>", "evil.>"},
				SubjectTransform: &jetstream.SubjectTransformConfig{Source: "evil.>", Destination: "mdap.replies.>"}, Storage: jetstream.MemoryStorage})
			return err
		}},
		{"rewrite the lease bucket", func(c context.Context) error {
			_, err := tjs.CreateOrUpdateKeyValue(c, jetstream.KeyValueConfig{Bucket: cluster.LeaseBucket, TTL: time.Hour})
			return err
		}},
		{"delete the victim's queued job by its sequence", func(c context.Context) error {
			st, err := stream(c, cluster.JobsStream)
			if err != nil {
				return err
			}
			return st.DeleteMsg(c, probeAck.Sequence)
		}},
		{"withdraw the victim's queued job through the engine, guessing its lease", func(c context.Context) error {
			return withdraw(c, tnc, "a guess")
		}},
		{"list the engine", func(c context.Context) error {
			names := tjs.StreamNames(c)
			for range names.Name() {
			}
			return names.Err()
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

	jobs, err := ajs.Stream(tctx, cluster.JobsStream)
	require.NoError(t, err)
	_, err = jobs.GetMsg(tctx, probeAck.Sequence)
	require.NoError(t, err, "the victim's job is still queued")
	vnc := vjs.Conn()
	require.NoError(t, withdraw(tctx, vnc, probe.Lease), "its coordinator withdraws it")
	_, err = jobs.GetMsg(tctx, probeAck.Sequence)
	require.ErrorIs(t, err, jetstream.ErrMsgNotFound, "withdrawn")

	// Refused at once, naming the refusal, not after the caller's
	// deadline.
	began := time.Now()
	_, err = cluster.CreateJournal(tctx, tjs, "victim", cluster.JournalConfig{})
	require.ErrorIs(t, err, cluster.ErrAuth)
	assert.Contains(t, err.Error(), "MDAP_LEASES.victim")
	assert.Less(t, time.Since(began), 5*time.Second)

	// What the thief may do: its own run's journal and task queue.
	journalAndQueueWork(t, tctx, tjs, "thief")

	// The victim's run: the winners of an undisturbed run, its lease
	// still its own, its task still there, its journal whole.
	run.Wait()
	require.NoError(t, solveErr)
	assert.Equal(t, wantSteps, gotSteps)
	assert.Zero(t, d.Stats().Forged)
	leases, err := ajs.KeyValue(tctx, cluster.RunLeaseBucket("victim"))
	require.NoError(t, err)
	e, err := leases.Get(tctx, "victim")
	require.NoError(t, err)
	assert.Equal(t, "the victim", string(e.Value()))
	require.NoError(t, j.Close())
	n, err := vq.Pending(tctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the victim's task is still queued")
	_, ok, err := vq.Result(tctx, "t1")
	require.NoError(t, err)
	assert.False(t, ok, "no forged result")
	j2, err := cluster.OpenJournal(tctx, vjs, "victim", cluster.JournalConfig{})
	require.NoError(t, err, "the victim's journal reads back whole")
	require.NoError(t, j2.Close())
	js, err := ajs.Stream(tctx, cluster.RunStream("victim"))
	require.NoError(t, err)
	info, err := js.Info(tctx, jetstream.WithSubjectFilter(">"))
	require.NoError(t, err)
	assert.Equal(t, map[string]uint64{"mdap.run.victim.journal": uint64(len(wantSteps) + 1)}, info.State.Subjects, "a header and a line a step, nothing more, nothing under the victim's batch journals")
	shared, err := ajs.Stream(tctx, cluster.JournalsStream)
	require.NoError(t, err)
	info, err = shared.Info(tctx, jetstream.WithSubjectFilter("mdap.journals.victim.>"))
	require.NoError(t, err)
	assert.Empty(t, info.State.Subjects, "nothing written under the victim's old subjects")
}

// TestFullRunStreamsFailFastNamingThem: what one run may store is
// bounded (ProvisionConfig.RunLines, RunBytes): a run whose journal is
// full fails at its next step with an error naming the journal, its
// stream and that it is full, its lines kept (none dropped to make room);
// a run key's full task stream (an eighth of its budget, RunKeyBytes)
// refuses a task the same way, naming the budget (ErrBudgetFull).
func TestFullRunStreamsFailFastNamingThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{RunLines: 20, RunBytes: 64 << 10, RunKeyBytes: 512 << 10}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	_, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	_, vjs := connectAs(t, url, s.victim)
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	j, err := cluster.CreateJournal(ctx, vjs, "victim", cluster.JournalConfig{})
	require.NoError(t, err)
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	task, err := hanoi.New(6) // 63 steps: more lines than 20
	require.NoError(t, err)
	// "At its next step": timed from the last step decided, not from the
	// run's start, whose steps before the journal filled take what the
	// machine gives them (40 s in a run slowed three times, against a
	// bound of 30 s on the whole); a failure that retried the full
	// journal until its deadline (30 s) or waited out a sample's Timeout
	// (30 s) would be later than that.
	var mu sync.Mutex
	lastStep := time.Now()
	solver := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2, Parallel: 2}}, Model: remote, Journal: j,
		Progress: func(maker.Event) { mu.Lock(); lastStep = time.Now(); mu.Unlock() }}
	_, err = solver.Solve(ctx, task)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nats:victim")
	assert.Contains(t, err.Error(), cluster.RunStream("victim"))
	assert.Contains(t, err.Error(), "full")
	mu.Lock()
	assert.Less(t, time.Since(lastStep), 30*time.Second, "failed after its last step")
	mu.Unlock()
	_ = j.Close()
	st, err := ajs.Stream(ctx, cluster.RunStream("victim"))
	require.NoError(t, err)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("mdap.run.victim.journal"))
	require.NoError(t, err)
	assert.Equal(t, uint64(20), info.State.Subjects["mdap.run.victim.journal"], "the journal holds its bound")
	first, err := st.GetMsg(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, "1", first.Header.Get("Mdap-Line"), "the journal's first line is kept")

	q, err := cluster.OpenTaskQueue(ctx, vjs, "victim", cluster.TaskQueueConfig{})
	require.NoError(t, err)
	big := make([]byte, 8<<10)
	var perr error
	for i := 0; i < 16 && perr == nil; i++ {
		perr = q.Publish(ctx, fmt.Sprintf("t%d", i), big)
	}
	require.ErrorIs(t, perr, cluster.ErrBudgetFull)
	assert.Contains(t, perr.Error(), cluster.RunQueueStream("victim"))
	assert.Contains(t, perr.Error(), "full")
}
