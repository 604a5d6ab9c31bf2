package cluster_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunsOfAnEarlierMdapAreRefusedNamingTheWay: a journal or a task
// queue an earlier mdap kept on a stream of its own (MDAP_JOURNAL_<run>,
// MDAP_TASKS_<queue>) is neither resumed nor silently started afresh
// beside it: opening it fails with ErrOldLayout naming the stream and
// maker nats rm; the journal still exports to a file (which a run
// resumes from); RemoveRun removes both, and the names are free again.
func TestRunsOfAnEarlierMdapAreRefusedNamingTheWay(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// As an earlier mdap made them.
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: cluster.JournalStreamPrefix + "old", Subjects: []string{"mdap.journal.old"}, Storage: jetstream.FileStorage, DenyDelete: true})
	require.NoError(t, err)
	_, err = js.Publish(ctx, "mdap.journal.old", []byte(`{"line":1}`))
	require.NoError(t, err)
	_, err = js.Publish(ctx, "mdap.journal.old", []byte(`{"line":2}`))
	require.NoError(t, err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: cluster.TaskStreamPrefix + "oldq", Subjects: []string{"mdap.tasks.oldq"}, Retention: jetstream.WorkQueuePolicy})
	require.NoError(t, err)
	_, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: cluster.ResultBucketPrefix + "oldq"})
	require.NoError(t, err)

	for _, c := range []struct {
		what, stream, rm string
		open             func() error
	}{
		{"open", cluster.JournalStreamPrefix + "old", "maker nats rm old ", func() error { _, err := cluster.OpenJournal(ctx, js, "old", cluster.JournalConfig{}); return err }},
		{"create", cluster.JournalStreamPrefix + "old", "maker nats rm old ", func() error { _, err := cluster.CreateJournal(ctx, js, "old", cluster.JournalConfig{}); return err }},
		{"queue", cluster.TaskStreamPrefix + "oldq", "maker nats rm oldq ", func() error { _, err := cluster.OpenTaskQueue(ctx, js, "oldq", cluster.TaskQueueConfig{}); return err }},
	} {
		err := c.open()
		require.ErrorIs(t, err, cluster.ErrOldLayout, c.what)
		assert.Contains(t, err.Error(), c.rm, c.what)
		assert.Contains(t, err.Error(), "on the stream "+c.stream+",", c.what)
	}
	var buf bytes.Buffer
	require.NoError(t, cluster.ExportJournal(ctx, js, "old", &buf))
	assert.Equal(t, "{\"line\":1}\n{\"line\":2}\n", buf.String(), "an earlier mdap's journal still exports")

	removed, err := cluster.RemoveRun(ctx, js, "old")
	require.NoError(t, err)
	assert.Equal(t, []string{"journal old"}, removed)
	removed, err = cluster.RemoveRun(ctx, js, "oldq")
	require.NoError(t, err)
	assert.Equal(t, []string{"task queue oldq", "results of oldq"}, removed)
	j, err := cluster.CreateJournal(ctx, js, "old", cluster.JournalConfig{})
	require.NoError(t, err, "the name is free again")
	require.NoError(t, j.Close())
	_, err = cluster.OpenTaskQueue(ctx, js, "oldq", cluster.TaskQueueConfig{})
	require.NoError(t, err)
	_, err = js.Stream(ctx, cluster.JournalStreamPrefix+"old")
	require.ErrorIs(t, err, jetstream.ErrStreamNotFound)
}
