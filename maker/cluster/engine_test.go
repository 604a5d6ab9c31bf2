package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSampleStreamsAreBoundedMemory: docs/nats.md says "`MDAP_JOBS` and
// `MDAP_REPLIES` are memory streams of at most 256 MiB each", a job or a
// reply past that refused, never an old one dropped.
func TestSampleStreamsAreBoundedMemory(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	newDrawer(t, js, cluster.DrawerConfig{})
	for _, name := range []string{cluster.JobsStream, cluster.RepliesStream} {
		s, err := js.Stream(context.Background(), name)
		require.NoError(t, err, name)
		cfg := s.CachedInfo().Config
		assert.Equal(t, jetstream.MemoryStorage, cfg.Storage, name)
		assert.EqualValues(t, 256<<20, cfg.MaxBytes, name)
		assert.Equal(t, jetstream.DiscardNew, cfg.Discard, "%s: a message past the bound is refused", name)
		assert.True(t, cfg.DiscardNewPerSubject, "%s: and past its subject's bound", name)
		assert.Equal(t, 1, cfg.Replicas, name)
	}
}

// TestExistingSampleStreamsUsedAsTheyAre: docs/nats.md says "On a server
// without roles, streams that already exist (an operator's, or a file
// stream made by an earlier mdap) are used as they are". Streams an operator made beforehand, on file with their own age,
// size and description, serve a run over workers and are unchanged after
// it.
func TestExistingSampleStreamsUsedAsTheyAre(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	ctx := context.Background()
	want := map[string]jetstream.StreamConfig{}
	for name, subject := range map[string]string{cluster.JobsStream: "mdap.jobs.>", cluster.RepliesStream: "mdap.replies.>"} {
		cfg := jetstream.StreamConfig{
			Name:        name,
			Description: "the operator's",
			Subjects:    []string{subject},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     jetstream.FileStorage,
			MaxAge:      3 * time.Hour,
			MaxBytes:    64 << 20,
			Duplicates:  time.Minute,
			AllowMsgTTL: true,
		}
		s, err := js.CreateStream(ctx, cfg)
		require.NoError(t, err, name)
		want[name] = s.CachedInfo().Config
	}

	_, wjs := connect(t, srv.ClientURL())
	runWorker(t, newWorker(t, wjs, simModel(t, 3), cluster.WorkerConfig{Inflight: 2}))
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 30 * time.Second})
	remote, err := d.Model(simModel(t, 3).Identity())
	require.NoError(t, err)
	rep, _ := solveHanoi(t, remote, 3, vote.Config{K: 2, Parallel: 2})
	require.Equal(t, 7, rep.Steps)
	assert.Positive(t, d.Stats().Published, "the run went through the streams")

	for name, cfg := range want {
		s, err := js.Stream(ctx, name)
		require.NoError(t, err, name)
		got := s.CachedInfo().Config
		assert.Equal(t, cfg.Description, got.Description, name)
		assert.Equal(t, cfg.Storage, got.Storage, name)
		assert.Equal(t, cfg.MaxAge, got.MaxAge, name)
		assert.Equal(t, cfg.MaxBytes, got.MaxBytes, name)
		assert.Equal(t, cfg.Duplicates, got.Duplicates, name)
		assert.Equal(t, cfg.Discard, got.Discard, name)
	}
}
