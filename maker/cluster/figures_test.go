package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerFiguresAreItsStats: the engine's figures for its metrics
// are Stats in observe's terms (maker nats --metrics-addr reads them).
func TestServerFiguresAreItsStats(t *testing.T) {
	srv := startServer(t)
	st, err := srv.Stats()
	require.NoError(t, err)
	f, ok := srv.Figures(context.Background())
	require.True(t, ok)
	assert.Equal(t, len(st.Streams), len(f.Streams))
	for name, s := range st.Streams {
		assert.Equal(t, int64(s.Messages), f.Streams[name].Messages, name)
		assert.Equal(t, int64(s.Consumers), f.Streams[name].Consumers, name)
	}
	assert.Equal(t, st.Served, f.Served)
}

// TestIsFaultIsTheEnginesErrors: an outage, a lost lease and a closed
// connection are the engine's faults; a task's own error is not.
func TestIsFaultIsTheEnginesErrors(t *testing.T) {
	for _, err := range []error{cluster.ErrEngine, cluster.ErrNoJetStream, cluster.ErrLeaseTaken, fmt.Errorf("x: %w", cluster.ErrClosed)} {
		assert.True(t, cluster.IsFault(err), "%v", err)
	}
	for _, err := range []error{nil, errors.New("wrong answer"), cluster.ErrConfig, cluster.ErrNoReply} {
		assert.False(t, cluster.IsFault(err), "%v", err)
	}
}
