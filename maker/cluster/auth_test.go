package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// startRoleServer starts an embedded server with roles and returns it and
// its credentials folder.
func startRoleServer(t testing.TB) (*cluster.Server, string) {
	t.Helper()
	dir := t.TempDir()
	keys, made, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	require.Equal(t, cluster.Roles, made)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	return srv, dir
}

// connectAs connects with a role's credential, waiting for the server's
// greeting as long as connect does (2 s was not enough at a load of 25:
// "read tcp ...: i/o timeout").
func connectAs(t testing.TB, url, seed string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	opts, err := cluster.Credentials(seed, t.Name())
	require.NoError(t, err)
	nc, err := cluster.Connect(url, t.Name(), append(opts, nats.Timeout(30*time.Second))...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return nc, js
}

func TestCredentialsAreSecretAndReused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, made, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	assert.Equal(t, cluster.Roles, made)
	for _, r := range cluster.Roles {
		for _, f := range []string{cluster.SeedFile(dir, r), cluster.PubFile(dir, r)} {
			st, err := os.Stat(f)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
		}
	}
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	again, made, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	assert.Empty(t, made, "existing keys are kept")
	assert.Equal(t, keys, again)
	require.NoError(t, os.WriteFile(cluster.PubFile(dir, cluster.RoleWorker), []byte("not a key\n"), 0o600))
	_, _, err = cluster.EnsureCredentials(dir)
	require.ErrorIs(t, err, cluster.ErrAuth)
	assert.Contains(t, err.Error(), "nk -gen user")
}

// TestRolesRefuseRogues: on a server with roles, a client without
// credentials is refused; a client with worker credentials cannot read
// jobs it was not delivered, other clients' inboxes, or the journal, and
// cannot write or purge a journal; replies forged for the jobs of a run
// (their ids and reply subjects known, as if leaked) arrive before the
// honest workers' and are dropped and counted; and the run's winners
// equal an undisturbed local run's.
func TestRolesRefuseRogues(t *testing.T) {
	t.Parallel()
	srv, creds := startRoleServer(t)
	rogueScenario(t, srv.ClientURL(), cluster.SeedFile(creds, cluster.RoleCoordinator),
		cluster.SeedFile(creds, cluster.RoleWorker), cluster.SeedFile(creds, cluster.RoleWorker), cluster.SeedFile(creds, cluster.RoleAdmin))
}

// rogueScenario: see TestRolesRefuseRogues. The honest worker and the
// rogue sign in with the worker seeds given (the same on the embedded
// server, which isolates every connection; one key each on a stock
// nats-server, which isolates every user).
func rogueScenario(t *testing.T, url, coordSeed, workerSeed, rogueSeed, adminSeed string) {
	ctx := context.Background()
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 4, cfg)

	// No credentials: refused.
	_, err := cluster.Connect(url, "anonymous")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "uthorization")
	// A stranger's key is refused.
	other := t.TempDir()
	_, _, err = cluster.EnsureCredentials(other)
	require.NoError(t, err)
	opts, err := cluster.Credentials(cluster.SeedFile(other, cluster.RoleWorker), "stranger")
	require.NoError(t, err)
	_, err = cluster.Connect(url, "stranger", opts...)
	require.Error(t, err)

	// The honest worker: slow, so that a forger would be first. A model
	// answers in seconds, the forger within milliseconds of the leak; a
	// machine under load can make the leak itself take longer than the
	// sim's 20 ms, so the honest worker holds its first answers until
	// the rogue has forged one (at most forgeGrace): every run gives the
	// attacker its chance, with no more than the leak gives it.
	slow := sim.DefaultConfig()
	slow.Seed, slow.P, slow.FlagRate, slow.ErrorRate = 5, 0.85, 0.05, 0.01
	slow.Latency = sim.FixedLatency(20 * time.Millisecond)
	model, err := sim.New(hanoi.Oracle{}, slow)
	require.NoError(t, err)
	firstForged := make(chan struct{})
	var forgedOnce sync.Once
	releaseHeld := func() { forgedOnce.Do(func() { close(firstForged) }) }
	_, wjs := connectAs(t, url, workerSeed)
	worker := newWorker(t, wjs, heldModel{model, firstForged}, cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)

	// The rogue holds worker credentials.
	rogue, rjs := connectAs(t, url, rogueSeed)
	denied := make(chan error, 16)
	rogue.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { denied <- err })
	var snooped sync.Map
	for _, subj := range []string{"mdap.jobs.>", "_INBOX.>", ">", "mdap.journal.>"} {
		_, err := rogue.Subscribe(subj, func(m *nats.Msg) { snooped.Store(m.Subject, true) })
		require.NoError(t, err) // refused asynchronously
	}
	require.NoError(t, rogue.Flush())

	_, cjs := connectAs(t, url, coordSeed)
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)
	journal, err := cluster.CreateJournal(ctx, cjs, "guarded", cluster.JournalConfig{})
	require.NoError(t, err)

	// The leak: every job's id and reply subject reach the rogue as soon
	// as the job is stored (read here with the admin's rights: no client
	// role may read the job stream; the lease key is not leaked), and it
	// answers at once with a wrong move.
	_, ajs := connectAs(t, url, adminSeed)
	jobs, err := ajs.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	// Jobs stored before the run are not its jobs (on a stock server
	// earlier scenarios stored many): the leak begins after them.
	info, err := jobs.Info(ctx)
	require.NoError(t, err)
	leakCtx, stopLeak := context.WithCancel(ctx)
	var leaker sync.WaitGroup
	var forgedSent int
	leaker.Go(func() {
		for seq := info.State.LastSeq + 1; leakCtx.Err() == nil; {
			// The stream's state first: a job stored by then and not
			// found after was taken, one not stored yet is waited for.
			info, err := jobs.Info(leakCtx)
			if err != nil || info.State.LastSeq < seq {
				time.Sleep(time.Millisecond)
				continue
			}
			m, err := jobs.GetMsg(leakCtx, seq)
			seq++
			if err != nil {
				continue // taken and acknowledged before we saw it
			}
			var job cluster.Job
			require.NoError(t, json.Unmarshal(m.Data, &job))
			forged := cluster.Reply{Version: cluster.WireVersion, ID: job.ID, Worker: "rogue"}
			for range job.Samples { // a wrong move for every sample of the wave
				forged.Samples = append(forged.Samples, cluster.SampleReply{Choices: []cluster.Choice{{Content: `move = [1, 0, 2]` + "\nnext_state = [[], [], [1, 2, 3, 4]]"}}})
			}
			data, _ := json.Marshal(forged)
			// On its own identity's reply subject, the only one it may use.
			if _, err := rjs.Publish(leakCtx, job.ReplyTo+"."+identityOf(rogue), data, jetstream.WithMsgID(job.ID)); err == nil {
				forgedSent++
				releaseHeld()
			}
		}
	})
	task, err := hanoi.New(4)
	require.NoError(t, err)
	var gotSteps []step
	s := &maker.Solver{
		Config:  maker.Config{Vote: cfg},
		Model:   remote,
		Journal: journal,
		Progress: func(e maker.Event) {
			r := e.Record
			gotSteps = append(gotSteps, step{Winner: r.Winner.Value, Key: r.Key, Votes: r.Votes, Valid: r.Valid, Flagged: r.Flagged, Errors: r.Errors, Flags: r.Flags})
		},
	}
	grace := time.AfterFunc(forgeGrace, releaseHeld)
	_, err = s.Solve(ctx, task)
	grace.Stop()
	stopLeak()
	leaker.Wait()
	require.NoError(t, err)
	require.NoError(t, journal.Close())
	assert.True(t, task.Solved())
	assert.Equal(t, wantSteps, gotSteps, "the winners, votes and counts of an undisturbed run")
	st := d.Stats()
	assert.Positive(t, forgedSent, "the rogue forged a reply within %s of the run's start", forgeGrace)
	assert.Positive(t, st.Forged, "forged replies reached the drawer and were dropped: %+v", st)
	assert.Equal(t, st.Published, st.Replies+st.Withdrawn, "every sample was answered by the worker or withdrawn")

	// The journal, as the coordinator wrote it.
	var before bytes.Buffer
	require.NoError(t, cluster.ExportJournal(ctx, cjs, "guarded", &before))

	// The rogue cannot rewrite it: no append, no purge, no delete, no
	// reading either.
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = rjs.Publish(short, "mdap.journals.guarded", []byte(`{"step":0}`))
	assert.Error(t, err, "append to a journal")
	assert.Error(t, rjs.DeleteStream(short, cluster.JournalsStream), "delete the journals")
	if st, err := rjs.Stream(short, cluster.JournalsStream); err == nil {
		assert.Error(t, st.Purge(short, jetstream.WithPurgeSubject("mdap.journals.guarded")), "purge a journal")
	}
	_, err = rjs.CreateOrUpdateKeyValue(short, jetstream.KeyValueConfig{Bucket: cluster.LeaseBucket})
	assert.Error(t, err, "touch the leases")
	var after bytes.Buffer
	require.NoError(t, cluster.ExportJournal(ctx, cjs, "guarded", &after))
	assert.Equal(t, before.String(), after.String(), "the journal is unchanged")

	// Nothing was snooped; the subscriptions were refused.
	snooped.Range(func(k, _ any) bool { t.Errorf("the rogue read %v", k); return true })
	select {
	case err := <-denied:
		assert.ErrorIs(t, err, nats.ErrPermissionViolation)
	case <-time.After(5 * time.Second):
		t.Fatal("no permission violation reported to the rogue")
	}
}

// forgeGrace bounds how long the honest worker of rogueScenario holds its
// answers for the rogue's first forgery: far longer than a leak takes
// under load, so that only a rogue that cannot forge at all is given up
// on (and the scenario fails, naming it).
const forgeGrace = 10 * time.Second

// heldModel is a model whose calls wait until forged is closed before
// answering.
type heldModel struct {
	*sim.Model
	forged <-chan struct{}
}

func (m heldModel) Identity() string { return maker.ModelIdentity(m.Model) }

func (m heldModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	select {
	case <-m.forged:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

// A coordinator cannot publish a reply, nor take jobs, nor publish a job
// under another key's subject or on a route nobody serves; a worker cannot
// publish a job.
//
// A refused publication gets no answer, so each refusal waits out its
// short second; what the server answers (a job stored, no stream for a
// route nobody serves) is waited for under ctx alone, which spans the
// whole test (five refusals' seconds and the setup): a second for an
// answer, or 10 s for all, was a bet on the machine's load.
func TestRolesKeepToTheirSubjects(t *testing.T) {
	t.Parallel()
	srv, creds := startRoleServer(t)
	url := srv.ClientURL()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cnc, cjs := connectAs(t, url, cluster.SeedFile(creds, cluster.RoleCoordinator))
	newDrawer(t, cjs, cluster.DrawerConfig{}) // the sample streams
	_, wjs := connectAs(t, url, cluster.SeedFile(creds, cluster.RoleWorker))

	short := func() context.Context {
		c, cancel := context.WithTimeout(ctx, time.Second)
		t.Cleanup(cancel)
		return c
	}
	_, err := cjs.Publish(short(), "mdap.replies.dX.job", []byte(`{}`))
	assert.Error(t, err, "a coordinator publishes a reply")
	_, err = cjs.CreateOrUpdateConsumer(short(), cluster.JobsStream, jetstream.ConsumerConfig{Durable: "w-x", FilterSubject: "mdap.jobs.x"})
	assert.Error(t, err, "a coordinator takes jobs")
	_, err = wjs.Publish(short(), "mdap.jobs.x", []byte(`{}`))
	assert.Error(t, err, "a worker publishes a job")
	_, err = wjs.CreateStream(short(), jetstream.StreamConfig{Name: "MDAP_JOURNAL_x", Subjects: []string{"mdap.journal.x"}})
	assert.Error(t, err, "a worker creates a journal")

	// What each role needs works: a job on a served route (a worker
	// asked for it), under its own key.
	w := newWorker(t, wjs, simModel(t, 1), cluster.WorkerConfig{Route: "x"})
	_ = w
	own := "mdap.jobs." + cluster.RouteToken("x") + "." + identityOf(cnc)
	_, err = cjs.Publish(ctx, own, []byte(`{}`))
	assert.NoError(t, err, "a coordinator publishes a job")
	_, err = cjs.Publish(short(), "mdap.jobs."+cluster.RouteToken("x")+".someoneelse", []byte(`{}`))
	assert.Error(t, err, "a coordinator publishes a job under another key")
	_, err = cjs.Publish(ctx, "mdap.jobs."+cluster.RouteToken("nobody")+"."+identityOf(cnc), []byte(`{}`))
	assert.ErrorIs(t, err, jetstream.ErrNoStreamResponse, "a job on a route nobody serves")
}
