package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker nats --key-jobs N --job-bytes B: the engine's job stream takes
// at most N jobs of one key on a route and none over B bytes, as its own
// stream settings (read with the admin credential) say.
func TestBinaryNATSJobBounds(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	url, _ := startNATSIn(t, store, "--key-jobs", "3", "--job-bytes", "4096")
	opts, err := cluster.Credentials(cluster.SeedFile(filepath.Join(store, "creds"), cluster.RoleAdmin), t.Name())
	require.NoError(t, err)
	nc, err := cluster.Connect(url, t.Name(), opts...)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, cluster.JobsStream)
	require.NoError(t, err)
	c := st.CachedInfo().Config
	assert.Equal(t, int64(3), c.MaxMsgsPerSubject)
	assert.Equal(t, int32(4096), c.MaxMsgSize)
}
