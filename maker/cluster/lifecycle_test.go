package cluster_test

import (
	"context"
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

// Nothing a run leaves grows forever by default: journals, task queues
// and results have a retention, consumers an inactive threshold; a chosen
// retention is kept.
func TestRetentionByDefaultAndChosen(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	ctx := context.Background()
	for run, maxAge := range map[string]time.Duration{"kept": 0, "short": time.Hour} {
		j, err := cluster.CreateJournal(ctx, js, run, cluster.JournalConfig{MaxAge: maxAge})
		require.NoError(t, err)
		task, err := hanoi.New(2)
		require.NoError(t, err)
		_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 1}}, Model: simModel(t, 1), Journal: j}).Solve(ctx, task)
		require.NoError(t, err)
		require.NoError(t, j.Close())
	}
	_, err := cluster.CreateJournal(ctx, js, "neg", cluster.JournalConfig{MaxAge: -time.Hour})
	require.ErrorIs(t, err, cluster.ErrConfig)
	_, err = cluster.CreateJournal(ctx, js, "long", cluster.JournalConfig{MaxAge: cluster.MaxRetention + time.Hour})
	require.ErrorIs(t, err, cluster.ErrConfig)
	q, err := cluster.OpenTaskQueue(ctx, js, "q", cluster.TaskQueueConfig{MaxAge: 2 * time.Hour})
	require.NoError(t, err)
	require.NoError(t, q.Publish(ctx, "t1", []byte("x")))
	require.NoError(t, q.Publish(ctx, "t2", []byte("y")))
	c, err := q.Take(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Complete(ctx, []byte("done")))
	w := newWorker(t, js, simModel(t, 1), cluster.WorkerConfig{})

	// Each line, task and result carries its run's retention as a TTL;
	// the shared streams' MaxAge bounds them all.
	ttl := func(stream, subject string) string {
		st, err := js.Stream(ctx, stream)
		require.NoError(t, err)
		assert.Equal(t, cluster.MaxRetention, st.CachedInfo().Config.MaxAge, stream)
		m, err := st.GetLastMsgForSubject(ctx, subject)
		require.NoError(t, err, subject)
		return m.Header.Get(jetstream.MsgTTLHeader)
	}
	assert.Equal(t, cluster.DefaultRetention.String(), ttl(cluster.JournalsStream, "mdap.journals.kept"))
	assert.Equal(t, time.Hour.String(), ttl(cluster.JournalsStream, "mdap.journals.short"))
	left := "mdap.queues.q.t2"
	if c.ID == "t2" {
		left = "mdap.queues.q.t1"
	}
	assert.Equal(t, (2 * time.Hour).String(), ttl(cluster.TasksStream, left))
	assert.Equal(t, (2 * time.Hour).String(), ttl("KV_"+cluster.ResultsBucket, "$KV."+cluster.ResultsBucket+".q."+c.ID))
	for stream, cons := range map[string]string{cluster.TasksStream: "q_q", cluster.JobsStream: "w-" + cluster.RouteToken(w.Route())} {
		c, err := js.Consumer(ctx, stream, cons)
		require.NoError(t, err)
		assert.Equal(t, cluster.DefaultConsumerInactive, c.CachedInfo().Config.InactiveThreshold, cons)
	}
}

// maker nats ls and rm in the library: List shows journals, task queues
// and routes; RemoveRun removes a run's journal, or a queue with its
// results and its tasks' journals, never a journal in use.
func TestListAndRemoveRun(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	ctx := context.Background()
	w := newWorker(t, js, simModel(t, 1), cluster.WorkerConfig{})
	j, err := cluster.CreateJournal(ctx, js, "r1", cluster.JournalConfig{})
	require.NoError(t, err)
	task, err := hanoi.New(3)
	require.NoError(t, err)
	_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 2}}, Model: simModel(t, 1), Journal: j}).Solve(ctx, task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	q, err := cluster.OpenTaskQueue(ctx, js, "q1", cluster.TaskQueueConfig{})
	require.NoError(t, err)
	require.NoError(t, q.Publish(ctx, "t1", []byte("x")))
	require.NoError(t, q.Publish(ctx, "t2", []byte("y")))
	c, err := q.Take(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Complete(ctx, []byte("done")))
	tj, _, err := cluster.TaskJournal(ctx, js, "q1", "t1", cluster.JournalConfig{})
	require.NoError(t, err)
	task, err = hanoi.New(2)
	require.NoError(t, err)
	_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 1}}, Model: simModel(t, 1), Journal: tj}).Solve(ctx, task)
	require.NoError(t, err)
	require.NoError(t, tj.Close())
	busy, err := cluster.CreateJournal(ctx, js, "busy", cluster.JournalConfig{})
	require.NoError(t, err)
	defer busy.Close()
	busyTask, err := hanoi.New(2)
	require.NoError(t, err)
	busy.CheckpointEvery = 1
	_, err = (&maker.Solver{Config: maker.Config{Vote: vote.Config{K: 1}}, Model: simModel(t, 1), Journal: busy}).Solve(ctx, busyTask)
	require.NoError(t, err)

	got, err := cluster.List(ctx, js)
	require.NoError(t, err)
	byName := map[string]cluster.Leftover{}
	for _, l := range got {
		byName[l.Kind+" "+l.Name] = l
	}
	assert.Positive(t, byName["journal r1"].Messages)
	assert.Equal(t, cluster.DefaultRetention, byName["journal r1"].Retention)
	assert.NotEmpty(t, byName["journal busy"].Holder, "a journal in use shows its holder")
	assert.Empty(t, byName["journal r1"].Holder)
	assert.Equal(t, uint64(1), byName["tasks q1"].Messages, "one task left")
	assert.Equal(t, uint64(1), byName["tasks q1"].Results)
	assert.Contains(t, byName, "route "+cluster.RouteToken(w.Route()))

	removed, err := cluster.RemoveRun(ctx, js, "r1")
	require.NoError(t, err)
	assert.Equal(t, []string{"journal r1"}, removed)
	removed, err = cluster.RemoveRun(ctx, js, "q1")
	require.NoError(t, err)
	assert.Equal(t, []string{"journal q1.t1", "task queue q1", "results of q1"}, removed)
	_, err = cluster.RemoveRun(ctx, js, "r1")
	require.ErrorIs(t, err, cluster.ErrNotFound)
	_, err = cluster.RemoveRun(ctx, js, "busy")
	require.ErrorIs(t, err, journal.ErrLocked, "a journal in use is never removed")
	_, err = cluster.RemoveRun(ctx, js, "a.b")
	require.ErrorIs(t, err, cluster.ErrConfig)

	got, err = cluster.List(ctx, js)
	require.NoError(t, err)
	var left []string
	for _, l := range got {
		if l.Kind != "route" {
			left = append(left, l.Kind+" "+l.Name)
		}
	}
	assert.Equal(t, []string{"journal busy"}, left)
	results, err := js.KeyValue(ctx, cluster.ResultsBucket)
	require.NoError(t, err)
	_, err = results.Get(ctx, "q1.t1")
	assert.ErrorIs(t, err, jetstream.ErrKeyNotFound, "the queue's results are gone")
}

// TestMonitorIsLoopbackOnly: the NATS server's monitoring endpoints have
// no authentication, so only a loopback address is accepted.
func TestMonitorIsLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "8222", ":8222", "127.0.0.1:0", "[::1]:8222", "localhost:8222"} {
		assert.NoError(t, cluster.CheckMonitor(ok), ok)
	}
	for _, bad := range []string{"0.0.0.0:8222", "[::]:8222", "10.1.2.3:8222", "example.com:8222", "nope", "127.0.0.1:70000"} {
		assert.ErrorIs(t, cluster.CheckMonitor(bad), cluster.ErrConfig, bad)
	}
}
