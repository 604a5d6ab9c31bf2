package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker nats --key-jobs N --job-bytes B: the engine's job stream takes
// at most N jobs of one key on a route and none over B bytes, as its own
// stream settings (read with the admin credential) say. --route-quota 1:
// a worker identity gets one route of its own, and its second is refused
// naming the quota. --max-routes 2: another identity's route is the
// second served, and a third identity's is refused naming --max-routes.
func TestBinaryNATSJobBounds(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	url, _ := startNATSIn(t, store, "--key-jobs", "3", "--job-bytes", "4096", "--route-quota", "1", "--max-routes", "2")
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

	ask := func(worker, route string) string {
		wopts, err := cluster.Credentials(filepath.Join(store, "creds", "workers", worker+".nk"), t.Name())
		require.NoError(t, err)
		wnc, err := cluster.Connect(url, t.Name(), wopts...)
		require.NoError(t, err)
		defer wnc.Close()
		key := strings.TrimPrefix(strings.SplitN(wnc.Opts.InboxPrefix, ".", 2)[0], "_INBOX_")
		m, err := wnc.RequestWithContext(ctx, "mdap.engine.route."+key, []byte(`{"route":"`+route+`"}`))
		require.NoError(t, err)
		var resp struct {
			Error string `json:"error"`
		}
		require.NoError(t, json.Unmarshal(m.Data, &resp))
		return resp.Error
	}
	assert.Empty(t, ask("w1", "first-model"))
	assert.Contains(t, ask("w1", "second-model"), "--route-quota")
	assert.Empty(t, ask("w2", "w2-model"))
	assert.Contains(t, ask("w3", "w3-model"), "--max-routes")
}
