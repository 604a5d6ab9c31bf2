package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
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

// runBudget is the journal budget of each run key in the budget tests,
// and sharedBudget the shared journal stream's: small, so that a flood
// fills either in a second.
const (
	runBudget    = 512 << 10
	sharedBudget = 1 << 20
)

// floodJournals publishes journal lines as the holder of js (a run key)
// may, raw, on every journal subject pattern a run key was ever allowed
// (the shared stream's task subjects of its run, and its own stream's), a
// new subject each time (each holds RunLines lines), lines of 32 KiB
// until refused, then of 1 KiB, then of 16 bytes, to fill what is left,
// until every pattern is refused. It returns the bytes stored.
func floodJournals(t *testing.T, ctx context.Context, js jetstream.JetStream, run string) int {
	t.Helper()
	stored, i := 0, 0
	for _, p := range []string{"mdap.journals." + run + ".f%d", "mdap.run." + run + ".journal.f%d"} {
		for _, size := range []int{32 << 10, 1 << 10, 16} {
			line := bytes.Repeat([]byte("x"), size)
			var err error
			for ; err == nil && stored < 8*sharedBudget; i++ {
				c, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err = js.Publish(c, fmt.Sprintf(p, i), line)
				cancel()
				if err == nil {
					stored += len(line)
				}
			}
			t.Logf("flood on %s with lines of %d bytes refused after %d bytes stored: %v", p, size, stored, err)
			if !strings.Contains(fmt.Sprint(err), "maximum") {
				break // refused, not full: this pattern is not the run key's
			}
		}
	}
	return stored
}

// TestARunKeyFillsOnlyItsOwnBudget: a run key that publishes journal
// lines on every subject it may until refused fills its own budget only
// (issue 35): another run key's run has an undisturbed run's winners and
// a whole journal, and the flooder's own run fails at its next step
// naming its stream and budget.
func TestARunKeyFillsOnlyItsOwnBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{RunBytes: sharedBudget, RunKeyBytes: runBudget}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	runBudgetScenario(t, srv.ClientURL(), budgetSeeds{flooder: s.thief, flooderRun: "thief", other: s.victim, otherRun: "victim", worker: s.worker, admin: s.admin})
}

// budgetSeeds are the credentials of a run budget scenario: two run keys
// (the flooder's and another's) and their runs, a worker, the admin and
// the shared coordinator.
type budgetSeeds struct{ flooder, flooderRun, other, otherRun, worker, admin, coord string }

// runBudgetScenario: on an engine whose run keys' budget is runBudget,
// the flooder fills its own and the other run goes on (see
// TestARunKeyFillsOnlyItsOwnBudget).
func runBudgetScenario(t *testing.T, url string, s budgetSeeds) {
	cfg := vote.Config{K: 2, Parallel: 2}
	_, wantSteps := solveHanoi(t, simModel(t, 5), 4, cfg)
	_, wjs := connectAs(t, url, s.worker)
	worker := newWorker(t, wjs, simModel(t, 5), cluster.WorkerConfig{Inflight: 4})
	runWorker(t, worker)
	_, tjs := connectAs(t, url, s.flooder)
	_, vjs := connectAs(t, url, s.other)
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The flooder opens its own run's journal as its run would, then
	// floods.
	own, err := cluster.CreateJournal(ctx, tjs, s.flooderRun, cluster.JournalConfig{})
	require.NoError(t, err)
	stored := floodJournals(t, ctx, tjs, s.flooderRun)
	assert.LessOrEqual(t, stored, runBudget, "the flooder stored no more than its budget")
	assert.Greater(t, stored, runBudget*9/10, "the flooder filled its budget")
	// Another run key's run: an undisturbed run's winners, a whole
	// journal.
	solve := func(js jetstream.JetStream, j *maker.Solver) ([]step, error) {
		var steps []step
		var mu sync.Mutex
		j.Config = maker.Config{Vote: cfg}
		j.Progress = func(e maker.Event) {
			r := e.Record
			mu.Lock()
			steps = append(steps, step{Winner: r.Winner.Value, Key: r.Key, Votes: r.Votes, Valid: r.Valid, Flagged: r.Flagged, Errors: r.Errors, Flags: r.Flags})
			mu.Unlock()
		}
		d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 30 * time.Second})
		remote, err := d.Model(worker.Route())
		require.NoError(t, err)
		j.Model = remote
		task, err := hanoi.New(4)
		require.NoError(t, err)
		_, err = j.Solve(ctx, task)
		return steps, err
	}
	vj, err := cluster.CreateJournal(ctx, vjs, s.otherRun, cluster.JournalConfig{})
	require.NoError(t, err, "another run key starts its journal")
	gotSteps, err := solve(vjs, &maker.Solver{Journal: vj})
	require.NoError(t, err, "another run key's run")
	require.NoError(t, vj.Close())
	assert.Equal(t, wantSteps, gotSteps)
	var exported bytes.Buffer
	require.NoError(t, cluster.ExportJournal(ctx, ajs, s.otherRun, &exported))
	assert.Equal(t, len(wantSteps)+1, strings.Count(exported.String(), "\n"), "a header and a line a step")

	// The flooder's own run fails at its next step, naming its stream
	// and budget.
	began := time.Now()
	_, err = solve(tjs, &maker.Solver{Journal: own})
	require.ErrorIs(t, err, cluster.ErrBudgetFull)
	t.Logf("the flooder's own run: %v", err)
	assert.Contains(t, err.Error(), cluster.JournalName(s.flooderRun))
	assert.Contains(t, err.Error(), cluster.RunStream(s.flooderRun))
	assert.Contains(t, err.Error(), "full")
	assert.Contains(t, err.Error(), "budget")
	assert.Less(t, time.Since(began), 30*time.Second, "fails fast")
	_ = own.Close()
}

// TestARunKeysJournalOnTheSharedStreamIsNotLost: a run key's journal
// left on the shared JournalsStream (written before run keys had streams
// of their own) is refused by the run key with ErrOldLayout, naming the
// way to move it, never started anew beside it; the admin exports it
// whole and removes it, then the run key's journals are on its own
// stream, listed and removed by the admin's commands, and the shared
// coordinator is refused them, naming the run key.
func TestARunKeysJournalOnTheSharedStreamIsNotLost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{RunKeyBytes: runBudget}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	_, vjs := connectAs(t, url, s.victim)
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	solve := func(j *journal.Journal) {
		t.Helper()
		task, err := hanoi.New(2)
		require.NoError(t, err)
		_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 1}}, Model: simModel(t, 1), Journal: j}).Solve(ctx, task)
		require.NoError(t, err)
		require.NoError(t, j.Close())
	}

	// The shared coordinator keeps journals on the shared stream: the
	// run's journal as a run key kept it before.
	j, err := cluster.CreateJournal(ctx, cjs, "victim", cluster.JournalConfig{})
	require.NoError(t, err)
	solve(j)
	for _, open := range []func() (*journal.Journal, error){
		func() (*journal.Journal, error) {
			return cluster.OpenJournal(ctx, vjs, "victim", cluster.JournalConfig{})
		},
		func() (*journal.Journal, error) {
			return cluster.CreateJournal(ctx, vjs, "victim", cluster.JournalConfig{})
		},
	} {
		_, err = open()
		require.ErrorIs(t, err, cluster.ErrOldLayout)
		assert.Contains(t, err.Error(), cluster.JournalsStream)
		assert.Contains(t, err.Error(), "ExportJournal")
		assert.Contains(t, err.Error(), "maker nats rm victim")
	}
	var exported bytes.Buffer
	require.NoError(t, cluster.ExportJournal(ctx, ajs, "victim", &exported))
	assert.Equal(t, 4, strings.Count(exported.String(), "\n"), "the whole journal: a header and three steps")
	removed, err := cluster.RemoveRun(ctx, ajs, "victim")
	require.NoError(t, err)
	assert.Contains(t, removed, "journal victim")

	// Now on its own stream: its run and a task of its batch.
	j, err = cluster.CreateJournal(ctx, vjs, "victim", cluster.JournalConfig{})
	require.NoError(t, err)
	solve(j)
	tj, _, err := cluster.TaskJournal(ctx, vjs, "victim", "t1", cluster.JournalConfig{})
	require.NoError(t, err)
	solve(tj)
	st, err := ajs.Stream(ctx, cluster.RunStream("victim"))
	require.NoError(t, err)
	assert.Equal(t, int64(runBudget), st.CachedInfo().Config.MaxBytes, "the run key's budget")
	assert.Equal(t, uint64(8), st.CachedInfo().State.Msgs)
	left, err := cluster.List(ctx, ajs)
	require.NoError(t, err)
	var names []string
	for _, l := range left {
		if l.Kind == "journal" {
			names = append(names, l.Name)
			assert.Equal(t, uint64(4), l.Messages, l.Name)
		}
	}
	assert.Equal(t, []string{"victim", "victim.t1"}, names)
	exported.Reset()
	require.NoError(t, cluster.ExportJournal(ctx, ajs, "victim", &exported))
	assert.Equal(t, 4, strings.Count(exported.String(), "\n"))
	_, err = cluster.OpenJournal(ctx, cjs, "victim", cluster.JournalConfig{})
	require.ErrorIs(t, err, cluster.ErrAuth, "the shared coordinator may not read a run key's stream")
	assert.Contains(t, err.Error(), "maker nats run add victim")
	j, err = cluster.OpenJournal(ctx, vjs, "victim", cluster.JournalConfig{})
	require.NoError(t, err, "resumed on its own stream")
	require.NoError(t, j.Close())

	removed, err = cluster.RemoveRun(ctx, ajs, "victim")
	require.NoError(t, err)
	assert.Equal(t, []string{"journal victim", "journal victim.t1"}, removed)
	_, err = ajs.Stream(ctx, cluster.RunStream("victim"))
	require.ErrorIs(t, err, jetstream.ErrStreamNotFound, "its stream, emptied, is deleted: its reservation freed")
	left, err = cluster.List(ctx, ajs)
	require.NoError(t, err)
	for _, l := range left {
		assert.NotEqual(t, "journal", l.Kind, l.Name)
	}
}

// TestARunKeysBudgetIsSetPerRun: a run's budget recorded in the
// credentials folder (maker nats run add RUN --bytes) is its stream's
// MaxBytes, raised at its next journal, and sets the shares of its task
// stream, result and lease buckets; another run has the engine's.
func TestARunKeysBudgetIsSetPerRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, s := issueTenants(t, dir)
	require.ErrorIs(t, cluster.SetRunKeyBytes(dir, "nobody", 1<<20), cluster.ErrNotFound)
	require.ErrorIs(t, cluster.SetRunKeyBytes(dir, "victim", 10), cluster.ErrConfig)
	require.NoError(t, cluster.SetRunKeyBytes(dir, "victim", 64<<10))
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys,
		Provision: cluster.ProvisionConfig{RunKeyBytes: runBudget, RunKeyBytesOf: cluster.RunKeyBytesIn(dir)}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	_, ajs := connectAs(t, url, s.admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	budget := func(seed, run string) int64 {
		t.Helper()
		_, js := connectAs(t, url, seed)
		j, err := cluster.CreateJournal(ctx, js, run, cluster.JournalConfig{})
		if err != nil {
			j, err = cluster.OpenJournal(ctx, js, run, cluster.JournalConfig{})
		}
		require.NoError(t, err)
		require.NoError(t, j.Close())
		st, err := ajs.Stream(ctx, cluster.RunStream(run))
		require.NoError(t, err)
		return st.CachedInfo().Config.MaxBytes
	}
	assert.Equal(t, int64(64<<10), budget(s.victim, "victim"))
	assert.Equal(t, int64(runBudget), budget(s.thief, "thief"), "the engine's default")
	require.NoError(t, cluster.SetRunKeyBytes(dir, "victim", 128<<10))
	assert.Equal(t, int64(128<<10), budget(s.victim, "victim"), "raised at its next journal")

	// Its task queue, results and leases take shares of it: set at its
	// next queue (and journal), as the budget in force.
	shares := func(seed, run string) [3]int64 {
		t.Helper()
		_, js := connectAs(t, url, seed)
		_, err := cluster.OpenTaskQueue(ctx, js, run, cluster.TaskQueueConfig{})
		require.NoError(t, err)
		var out [3]int64
		for i, name := range []string{cluster.RunQueueStream(run), "KV_" + cluster.RunResultsBucket(run), "KV_" + cluster.RunLeaseBucket(run)} {
			st, err := ajs.Stream(ctx, name)
			require.NoError(t, err, name)
			out[i] = st.CachedInfo().Config.MaxBytes
		}
		return out
	}
	require.NoError(t, cluster.SetRunKeyBytes(dir, "victim", 1<<20))
	assert.Equal(t, int64(1<<20), budget(s.victim, "victim"))
	assert.Equal(t, [3]int64{128 << 10, 128 << 10, 32 << 10}, shares(s.victim, "victim"), "an eighth, an eighth, a thirty-second")
	assert.Equal(t, [3]int64{runBudget / 8, runBudget / 8, 16 << 10}, shares(s.thief, "thief"), "of the engine's default; at least 16 KiB")
}
