package cluster_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoordinatorDrawsJournalsAndClosesWhatItOpened: a Coordinator and a
// Worker each opened from settings alone solve a run over the engine,
// its journal there; Close releases the connection (the probe says so)
// and may be called again.
func TestCoordinatorDrawsJournalsAndClosesWhatItOpened(t *testing.T) {
	noCredsAround(t)
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	model := simModel(t, 7)
	wk, err := cluster.OpenWorker(ctx, model, cluster.WorkerConfig{URL: srv.ClientURL(), Inflight: 4})
	require.NoError(t, err)
	stop := runWorker(t, wk)
	require.NoError(t, wk.Connected())

	c, err := cluster.OpenCoordinator(cluster.CoordinatorConfig{URL: srv.ClientURL(), Keep: cluster.DefaultRetention, Run: "run-1", Timeout: 30 * time.Second})
	require.NoError(t, err)
	assert.Zero(t, c.MinVoters(), "MinWorkers 0 before Draw: any worker")
	d, err := c.Draw(ctx, model.Identity())
	require.NoError(t, err)
	assert.Equal(t, 1, c.MinVoters(), "a server without an agent cannot count identities: one voter")
	require.NotNil(t, c.FollowVoters(), "MinWorkers 0 on one route is followed between steps")
	again, err := c.Draw(ctx, "another-route")
	require.NoError(t, err)
	assert.Same(t, d, again, "one Drawer per coordinator")

	j, err := c.Journal(ctx, false, nil)
	require.NoError(t, err)
	m, err := d.SpecModel(model.Identity(), "sim", 0, 0)
	require.NoError(t, err)
	task := mustHanoi(t, 3)
	s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2}}, Model: m, Journal: j}
	_, err = s.Solve(ctx, task)
	require.NoError(t, err)
	require.True(t, task.Solved())
	require.NoError(t, j.Close())
	resumed, err := c.Journal(ctx, true, func(time.Duration) { t.Error("the lease was released by Close") })
	require.NoError(t, err, "the run's journal is on the engine")
	require.NoError(t, resumed.Close())

	require.NoError(t, c.Connected())
	require.NoError(t, c.Close())
	assert.Error(t, c.Connected(), "closed: the probe fails")
	assert.NoError(t, c.Close(), "a second Close does nothing")
	_, err = d.Model(model.Identity())
	require.NoError(t, err)
	_, err = llms.GenerateFromSinglePrompt(ctx, m, "x")
	assert.ErrorIs(t, err, cluster.ErrClosed, "Close closed the Drawer")

	stop()
	wk.Close()
	assert.Error(t, wk.Connected(), "OpenWorker's connection is the Worker's to close")
}

// TestCoordinatorRefusesBeforeConnecting: bad settings are field errors
// with no connection; a batch's Drawer takes MinWorkers as given.
func TestCoordinatorRefusesBeforeConnecting(t *testing.T) {
	noCredsAround(t)
	_, err := cluster.OpenCoordinator(cluster.CoordinatorConfig{URL: "nats://127.0.0.1:1", Keep: cluster.DefaultRetention, MinWorkers: -1})
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.Equal(t, "MinWorkers", fielderr.As(err).Fields[0].Name)
	_, err = cluster.OpenCoordinator(cluster.CoordinatorConfig{URL: "nats://127.0.0.1:4222", Keep: cluster.DefaultRetention, Timeout: -time.Second})
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.Equal(t, "Timeout", fielderr.As(err).Fields[0].Name)
	_, err = cluster.OpenCoordinator(cluster.CoordinatorConfig{URL: "nats://127.0.0.1:1", Keep: cluster.DefaultRetention})
	require.ErrorIs(t, err, cluster.ErrEngine, "nobody listens")
	assert.Contains(t, err.Error(), "maker nats", "says how to start a server")
	_, err = cluster.OpenWorker(t.Context(), simModel(t, 1), cluster.WorkerConfig{URL: "nats://127.0.0.1:1", Inflight: -1})
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.Equal(t, "Inflight", fielderr.As(err).Fields[0].Name)

	var none *cluster.Coordinator
	assert.NoError(t, none.Connected(), "nothing opened: nothing to probe")
	assert.NoError(t, none.Close(), "nothing opened: nothing to close")

	srv := startServer(t)
	c, err := cluster.OpenCoordinator(cluster.CoordinatorConfig{URL: srv.ClientURL(), Keep: cluster.DefaultRetention, MinWorkers: 2})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Journal(t.Context(), false, nil)
	require.ErrorIs(t, err, cluster.ErrConfig, "no Run, no journal")
	_, err = c.Draw(t.Context(), "")
	require.NoError(t, err)
	assert.Equal(t, 2, c.MinVoters(), "a batch: MinWorkers as given")
	assert.Nil(t, c.FollowVoters(), "nothing to follow without a route")
}

// TestAdminListsAndRemovesWithTheAdminsCredentialOnly: a worker's
// credential is refused at once, naming the command; the admin's lists,
// removes what a run left, and says which runs are missing or in
// progress.
func TestAdminListsAndRemovesWithTheAdminsCredentialOnly(t *testing.T) {
	noCredsAround(t)
	srv, dir := startRoleServer(t)
	_, err := cluster.OpenAdmin("http://"+cluster.DefaultAddr, cluster.ClientCreds{})
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.Equal(t, "URL", fielderr.As(err).Fields[0].Name)

	notAdmin, err := cluster.OpenAdmin(srv.ClientURL(), cluster.ClientCreds{Path: cluster.SeedFile(dir, cluster.RoleWorker), PathName: "--nats-creds"})
	require.NoError(t, err)
	defer notAdmin.Close()
	start := time.Now()
	_, err = notAdmin.List(t.Context())
	var na *cluster.NotAdminError
	require.True(t, errors.As(err, &na), "%v", err)
	assert.Contains(t, err.Error(), "maker nats ls needs the admin's credential")
	assert.Less(t, time.Since(start), cluster.AdminTimeout/2, "ended by the refusal")

	c, err := cluster.OpenCoordinator(cluster.CoordinatorConfig{URL: srv.ClientURL(), Keep: cluster.DefaultRetention, Run: "run-1",
		Creds: cluster.ClientCreds{Path: cluster.SeedFile(dir, cluster.RoleCoordinator)}})
	require.NoError(t, err)
	defer c.Close()
	j, err := c.Journal(t.Context(), false, nil)
	require.NoError(t, err)
	defer j.Close()
	q, err := c.OpenTaskQueue(t.Context(), "batch-1")
	require.NoError(t, err)
	require.NoError(t, q.Publish(t.Context(), "task-1", []byte("{}")))

	a, err := cluster.OpenAdmin(srv.ClientURL(), cluster.ClientCreds{Path: cluster.SeedFile(dir, cluster.RoleAdmin)})
	require.NoError(t, err)
	defer a.Close()
	list, err := a.List(t.Context())
	require.NoError(t, err)
	assert.True(t, hasLeftover(list, "run-1"), "%+v", list)
	assert.True(t, hasLeftover(list, "batch-1"), "%+v", list)
	removed, missing, err := a.RemoveRuns(t.Context(), []string{"ghost", "run-1"})
	require.ErrorIs(t, err, journal.ErrLocked)
	assert.Contains(t, err.Error(), "run-1 is in progress")
	assert.Empty(t, removed)
	assert.Equal(t, []string{"ghost"}, missing)

	removed, missing, err = a.RemoveRuns(t.Context(), []string{"batch-1", "ghost"})
	require.NoError(t, err)
	assert.NotEmpty(t, removed)
	assert.Equal(t, []string{"ghost"}, missing)
	list, err = a.List(t.Context())
	require.NoError(t, err)
	assert.False(t, hasLeftover(list, "batch-1"), "%+v", list)
}

func hasLeftover(list []cluster.Leftover, name string) bool {
	for _, l := range list {
		if l.Name == name {
			return true
		}
	}
	return false
}

func mustHanoi(t testing.TB, disks int) *hanoi.Task {
	t.Helper()
	task, err := hanoi.New(disks)
	require.NoError(t, err)
	return task
}

// TestOpenBatchQueueNamesTheTasksQueue: without a name the queue is
// RunBatchQueueName of the file's content and the run, opened on the
// engine; a name given is used as it is, the file unread; a file that
// cannot be read is its *fs.PathError.
func TestOpenBatchQueueNamesTheTasksQueue(t *testing.T) {
	noCredsAround(t)
	srv := startServer(t)
	c, err := cluster.OpenCoordinator(cluster.CoordinatorConfig{URL: srv.ClientURL(), Keep: cluster.DefaultRetention})
	require.NoError(t, err)
	defer c.Close()
	tasks := filepath.Join(t.TempDir(), "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte("tasks"), 0o600))
	r := runsetup.Run{Models: []string{"sim"}, Settings: runsetup.DefaultSettings(), Sim: sim.DefaultConfig()}
	want, err := cluster.RunBatchQueueName([]byte("tasks"), r)
	require.NoError(t, err)
	name, err := c.OpenBatchQueue(t.Context(), tasks, "", r)
	require.NoError(t, err)
	assert.Equal(t, want, name)
	name, err = c.OpenBatchQueue(t.Context(), filepath.Join(t.TempDir(), "absent"), "given", r)
	require.NoError(t, err)
	assert.Equal(t, "given", name)
	_, err = c.OpenBatchQueue(t.Context(), filepath.Join(t.TempDir(), "absent"), "", r)
	var pathErr *fs.PathError
	assert.ErrorAs(t, err, &pathErr)
}
