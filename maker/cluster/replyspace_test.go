package cluster_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// solveHanoiIn is solveHanoi for a goroutine, and bounded by ctx: it
// returns the steps, or the error that stopped the run.
func solveHanoiIn(ctx context.Context, m llms.Model, disks int, cfg vote.Config) ([]step, error) {
	task, err := hanoi.New(disks)
	if err != nil {
		return nil, err
	}
	var steps []step
	s := &maker.Solver{
		Config: maker.Config{Vote: cfg},
		Model:  m,
		Progress: func(e maker.Event) {
			r := e.Record
			steps = append(steps, step{Winner: r.Winner.Value, Key: r.Key, Votes: r.Votes, Valid: r.Valid, Flagged: r.Flagged, Errors: r.Errors, Flags: r.Flags})
		},
	}
	if _, err := s.Solve(ctx, task); err != nil {
		return steps, err
	}
	if !task.Solved() {
		return steps, errors.New("not solved")
	}
	return steps, nil
}

// replyTokens are the second tokens of the reply stream's subjects, as a
// coordinator reads them: its configured subjects and the subjects of
// the replies it holds (stream info, which no permission scopes to a
// subject).
func replyTokens(ctx context.Context, js jetstream.JetStream) []string {
	st, err := js.Stream(ctx, cluster.RepliesStream)
	if err != nil {
		return nil
	}
	subjects := st.CachedInfo().Config.Subjects
	if info, err := st.Info(ctx, jetstream.WithSubjectFilter("mdap.replies.>")); err == nil {
		for subj := range info.State.Subjects {
			subjects = append(subjects, subj)
		}
	}
	var tokens []string
	for _, subj := range subjects {
		parts := strings.Split(subj, ".")
		if len(parts) > 2 && parts[2] != "_" && parts[2] != ">" && parts[2] != "*" {
			tokens = append(tokens, parts[2])
		}
	}
	return tokens
}

// TestReviewRunKeyLearnsAndStealsAnotherRunsReplies: the holder of one
// run's key reads the reply stream's subjects (stream info, allowed to
// every coordinator) all along another run, and tries each Drawer token it
// finds there as the name of a reply consumer: its info, a pull of its
// replies, its deletion. It learns nothing it can use: it finds tokens
// (the victim's Drawer among them), yet every try finds no consumer or is
// refused, it takes no reply, and the victim's run has an undisturbed
// run's winners, its replies delivered. (When a Drawer's token was its
// consumer's name, the thief deleted the victim's consumer: the victim got
// no reply and waited out its timeout.)
func TestReviewRunKeyLearnsAndStealsAnotherRunsReplies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	replyTheftScenario(t, srv.ClientURL(), s)
}

func replyTheftScenario(t *testing.T, url string, s tenantSeeds) {
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 3, cfg)
	_, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	_, vjs := connectAs(t, url, s.victim)
	_, tjs := connectAs(t, url, s.thief)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A timeout past the ack wait (10 s): on the stock server, a job may
	// first go to a pull of the previous scenario's worker, gone, and
	// come back after it.
	d := newDrawer(t, vjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)

	var tokens, found, stolen, deleted atomic.Int64
	actx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for actx.Err() == nil {
			for _, tok := range replyTokens(actx, tjs) {
				tokens.Add(1)
				// Each try bounded on its own: a refused request is never
				// answered, and waits out its bound.
				try, tcancel := context.WithTimeout(actx, 500*time.Millisecond)
				if tjs.DeleteConsumer(try, cluster.RepliesStream, tok) == nil {
					deleted.Add(1)
				}
				tcancel()
				try, tcancel = context.WithTimeout(actx, 500*time.Millisecond)
				if cons, err := tjs.Consumer(try, cluster.RepliesStream, tok); err == nil {
					found.Add(1)
					if batch, err := cons.Fetch(16, jetstream.FetchMaxWait(200*time.Millisecond)); err == nil {
						for m := range batch.Messages() {
							stolen.Add(1)
							_ = m.Ack()
						}
					}
				}
				tcancel()
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	gotSteps, err := solveHanoiIn(ctx, remote, 3, cfg)
	stop()
	wg.Wait()
	require.NoError(t, err, "the victim's run: drawer %+v", d.Stats())
	assert.Equal(t, wantSteps, gotSteps, "drawer %+v, worker %+v", d.Stats(), worker.Stats())
	assert.Positive(t, tokens.Load(), "the thief read Drawer tokens in the reply stream's subjects")
	assert.Zero(t, deleted.Load(), "no consumer deleted by the thief")
	assert.Zero(t, found.Load(), "no consumer found under a token")
	assert.Zero(t, stolen.Load(), "no reply taken by the thief")
	assert.Positive(t, d.Stats().Replies, "the victim's replies were delivered")

	// Even a consumer whose name it knows (its own Drawer's) a
	// coordinator cannot delete: only the engine's agent does.
	tnc := tjs.Conn()
	own := fmt.Sprintf("dthief%d", time.Now().UnixNano())
	m, err := tnc.Request("mdap.engine.replies."+identityOf(tnc), []byte(`{"name":"`+own+`"}`), 10*time.Second)
	require.NoError(t, err)
	require.NotContains(t, string(m.Data), "error")
	dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
	defer dcancel()
	assert.Error(t, tjs.DeleteConsumer(dctx, cluster.RepliesStream, own), "a coordinator deleting a reply consumer")
	_, err = tjs.Consumer(ctx, cluster.RepliesStream, own)
	assert.NoError(t, err, "the consumer is still there")
	// The engine deletes it for its Drawer's Close.
	m, err = tnc.Request("mdap.engine.replies", []byte(`{"name":"`+own+`","drop":true}`), 10*time.Second)
	require.NoError(t, err)
	require.NotContains(t, string(m.Data), "error")
	_, err = tjs.Consumer(ctx, cluster.RepliesStream, own)
	assert.ErrorIs(t, err, jetstream.ErrConsumerNotFound, "deleted by the engine")
}

// TestALiveDrawersDroppedSubjectIsPutBack: the reply stream's subjects
// are written whole, by each agent and by Provision (JetStream has no
// conditional update), so a write based on a list read before a Drawer
// was added drops that Drawer's subject. The admin writes such a list
// again and again along a run (every 100 ms): the agent puts the subject
// back within a second, and at once when a worker's reply finds it
// missing (the worker asks the agent whether the Drawer is gone); the
// worker tries again while the agent says the Drawer lives, and the run
// has an undisturbed run's winners, every job answered, none handed
// back. (CI's stop 51: on two cores the subject was back only for the
// moments between a put-back each second and the next drop, and a reply
// that found none of them within 5 s was handed back.)
func TestALiveDrawersDroppedSubjectIsPutBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	cfg := vote.Config{K: 3, Parallel: 3}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 4, cfg)
	_, wjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleWorker))
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	_, ajs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleAdmin))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(worker.Route())
	require.NoError(t, err)

	drawerSubjects := func() []string {
		st, err := ajs.Stream(ctx, cluster.RepliesStream)
		require.NoError(t, err)
		var ds []string
		for _, subj := range st.CachedInfo().Config.Subjects {
			if subj != "mdap.replies._" {
				ds = append(ds, subj)
			}
		}
		return ds
	}
	require.Len(t, drawerSubjects(), 1, "the Drawer's subject")
	// A stale write every 100 ms all along the run, so that replies
	// meet the subject missing.
	var drops atomic.Int64
	dctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for dctx.Err() == nil {
			st, err := ajs.Stream(dctx, cluster.RepliesStream)
			if err == nil {
				c := st.CachedInfo().Config
				c.Subjects = []string{"mdap.replies._"}
				if _, err := ajs.UpdateStream(dctx, c); err == nil {
					drops.Add(1)
				}
			}
			select {
			case <-dctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	gotSteps, err := solveHanoiIn(ctx, remote, 4, cfg)
	stop()
	wg.Wait()
	require.NoError(t, err, "drawer %+v, worker %+v", d.Stats(), worker.Stats())
	t.Logf("%d drops; drawer %+v, worker %+v", drops.Load(), d.Stats(), worker.Stats())
	assert.Greater(t, drops.Load(), int64(2), "the subject was dropped all along the run")
	assert.Equal(t, wantSteps, gotSteps)
	stats := d.Stats()
	assert.Equal(t, stats.Published, stats.Replies, "every job answered: %+v", stats)
	assert.Zero(t, stats.Withdrawn, "no call waited out its timeout: %+v", stats)
	assert.Zero(t, worker.Stats().Released, "no job handed back: worker %+v", worker.Stats())
	assert.Eventually(t, func() bool { return len(drawerSubjects()) == 1 }, 5*time.Second, 50*time.Millisecond,
		"the subject dropped last is back within a second (slower under load)")
}

// winners are the steps' winning answers: what a run of many Drawers at
// once must share with a local run (a sample cancelled or failed under
// load may change a step's counts, never its winner).
func winners(steps []step) []string {
	var w []string
	for _, s := range steps {
		w = append(w, s.Key)
	}
	return w
}

// secondAgentEnv names the engine a second agent serves (see
// TestSecondAgentProcess): its URL, then the admin's seed.
const secondAgentEnv = "MDAP_TEST_SECOND_AGENT"

// replySpaceEngine is the engine of the two-agent test: room for every
// Drawer it makes at once, all of one coordinator identity (DrawerQuota
// as MaxDrawers). Its ack wait is short, so that a job whose
// acknowledgement is lost comes back soon (a reply counts once); one
// reaching the agent that did not deliver the job is done by the other
// (TestAnActReachingAnotherAgentIsDone).
var replySpaceEngine = cluster.ProvisionConfig{MaxDrawers: 64, DrawerQuota: 64, AckWait: 2 * time.Second}

// TestSecondAgentProcess is the second agent of
// TestReviewSecondAgentDropsALiveDrawersSubject, in a process of its own
// (as a second maker nats provision would be): run with secondAgentEnv
// set, it serves the engine until its standard input closes. Without it
// there is nothing to do.
func TestSecondAgentProcess(t *testing.T) {
	env := os.Getenv(secondAgentEnv)
	if env == "" {
		t.Skip("the helper process of TestReviewSecondAgentDropsALiveDrawersSubject")
	}
	url, seed, _ := strings.Cut(env, " ")
	nc, _ := connectAs(t, url, seed)
	a, err := cluster.ServeAgent(context.Background(), nc, replySpaceEngine)
	require.NoError(t, err)
	fmt.Println("serving")
	_, _ = io.Copy(io.Discard, os.Stdin)
	a.Stop()
}

// startSecondAgent runs TestSecondAgentProcess beside the test, until
// its end.
func startSecondAgent(t *testing.T, url, adminSeed string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondAgentProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), secondAgentEnv+"="+url+" "+adminSeed)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "serving" {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		require.True(t, ok, "the second agent serves")
	case <-time.After(time.Minute):
		t.Fatal("the second agent did not start within a minute")
	}
}

// TestReviewSecondAgentDropsALiveDrawersSubject: two agents serve one
// engine (ServeAgent allows several: they share the requests), the second
// in a process of its own, and coordinators make Drawers at once, rounds
// of 12, so that the agents change the reply stream at the same moments.
// Every Drawer's replies still reach it: each draws a run whose replies
// all arrive, none waiting out its timeout. (When each agent added its
// Drawer's subject by reading the stream's subjects and writing them back,
// under a lock of its own process, one agent's write dropped the subject
// the other had just added: that Drawer's replies found no stream.)
func TestReviewSecondAgentDropsALiveDrawersSubject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys, Provision: replySpaceEngine})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	startSecondAgent(t, url, cluster.SeedFile(dir, cluster.RoleAdmin))

	_, wjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleWorker))
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 8})
	runWorker(t, worker)
	const timeout = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var drawers []*cluster.Drawer
	for round := range 3 {
		_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
		made := make([]*cluster.Drawer, 12)
		errs := make([]error, len(made))
		var wg sync.WaitGroup
		for i := range made {
			wg.Go(func() { made[i], errs[i] = cluster.NewDrawer(ctx, cjs, cluster.DrawerConfig{Timeout: timeout}) })
		}
		wg.Wait()
		for i, d := range made {
			require.NoError(t, errs[i], "round %d, Drawer %d", round, i)
			t.Cleanup(func() { _ = d.Close() })
			drawers = append(drawers, d)
		}
	}
	cfg := vote.Config{K: 2, Parallel: 2}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 2, cfg)
	began := time.Now()
	errs := make([]error, len(drawers))
	var wg sync.WaitGroup
	for i, d := range drawers {
		wg.Go(func() {
			remote, err := d.Model(worker.Route())
			if err == nil {
				var got []step
				if got, err = solveHanoiIn(ctx, remote, 2, cfg); err == nil && !assert.ObjectsAreEqual(winners(wantSteps), winners(got)) {
					err = fmt.Errorf("winners %v, want %v", winners(got), winners(wantSteps))
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, d := range drawers {
		st := d.Stats()
		assert.NoError(t, errs[i], "Drawer %d: %+v", i, st)
		assert.Positive(t, st.Replies, "Drawer %d", i)
		assert.Equal(t, st.Published, st.Replies, "Drawer %d: every job answered", i)
		assert.Zero(t, st.Withdrawn, "Drawer %d: no job's calls waited out their timeout", i)
	}
	t.Logf("%d Drawers drew their runs in %s", len(drawers), time.Since(began))
	if t.Failed() {
		for i, d := range drawers {
			t.Logf("Drawer %d: %+v", i, d.Stats())
		}
		t.Logf("worker %+v", worker.Stats())
	}
}
