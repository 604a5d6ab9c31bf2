package cluster_test

import (
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDrawNotingSaysARouteNoWorkerServed: a route no worker has served
// gets one note naming it, the engine and how to start a worker; a
// batch's Drawer (route "") none.
func TestDrawNotingSaysARouteNoWorkerServed(t *testing.T) {
	noCredsAround(t)
	srv := startServer(t)
	var notes []string
	notef := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	c, err := cluster.OpenCoordinator(cluster.CoordinatorConfig{URL: srv.ClientURL(), Keep: cluster.DefaultRetention, MinWorkers: 1})
	require.NoError(t, err)
	defer c.Close()
	d, err := c.DrawNoting(t.Context(), "", notef)
	require.NoError(t, err)
	assert.NotNil(t, d)
	assert.Empty(t, notes, "a batch's Drawer")
	_, err = c.DrawNoting(t.Context(), "lonely", notef)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	assert.Equal(t, fmt.Sprintf(`no worker has served "lonely" on %s yet: samples fail after %s without one (start maker worker --nats %s with the same model flags)`,
		srv.ClientURL(), cluster.DefaultNoWorker, srv.ClientURL()), notes[0])
}
