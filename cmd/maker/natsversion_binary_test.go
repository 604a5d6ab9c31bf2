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

// TestBinaryNATSMixedVersionsNamed: against an engine that names a newer
// protocol than this build's, maker hanoi --nats and maker worker exit 1
// at once, naming both versions and that they must be upgraded, instead
// of waiting out their timeouts.
func TestBinaryNATSMixedVersionsNamed(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	_, err := cluster.AddRunCoordinator(filepath.Join(store, "creds"), "v")
	require.NoError(t, err)
	url, _ := startNATSIn(t, store)
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
	c.Metadata = map[string]string{"mdap.protocol": "99", "mdap.wire": "7"}
	_, err = js.UpdateStream(ctx, c)
	require.NoError(t, err)

	began := time.Now()
	run := start(t, nil, append([]string{"hanoi", "--disks", "3", "--nats", url, "--journal", "nats:v", "--progress", "off"}, natsSim...)...)
	assert.Equal(t, 1, run.wait(t, time.Minute), run.stderr.String())
	assert.Contains(t, run.stderr.String(), "protocol 99 (wire 7)")
	assert.Contains(t, run.stderr.String(), "upgrade this coordinator")
	w := startWorker(t, url)
	assert.Equal(t, 1, w.wait(t, time.Minute), w.stderr.String())
	assert.Contains(t, w.stderr.String(), "protocol 99 (wire 7)")
	assert.Contains(t, w.stderr.String(), "upgrade this worker")
	assert.Less(t, time.Since(began), 30*time.Second, "refused at once, not after --timeout")
}
