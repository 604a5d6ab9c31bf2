package cluster_test

import (
	"os"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEngineShutdownEndsTheWatch: Engine embeds *Server, so Shutdown is
// in its method set; a caller that shuts the engine down that way must
// not leave the credentials watch running (it writes keys into the
// folder every CredsEvery, for a server that is gone).
func TestEngineShutdownEndsTheWatch(t *testing.T) {
	noCredsAround(t)
	e, err := cluster.StartEngine(cluster.EngineConfig{Addr: "127.0.0.1:0", Store: t.TempDir()}, nil, nil)
	require.NoError(t, err)
	t.Cleanup(e.Stop)
	e.Shutdown() // the promoted *Server method
	seed := cluster.SeedFile(e.Creds.Dir, cluster.RoleAdmin)
	require.NoError(t, os.Remove(seed))
	require.NoError(t, os.Remove(cluster.PubFile(e.Creds.Dir, cluster.RoleAdmin)))
	time.Sleep(3 * cluster.CredsEvery)
	_, err = os.Stat(seed)
	assert.ErrorIs(t, err, os.ErrNotExist, "the watch still ran after Shutdown: it made a new admin key")
}
