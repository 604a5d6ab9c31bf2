package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentConfigRefusesAnEmptyRouteBeforeConnecting: an empty route is
// a field error of Routes, reported with nothing dialled (the URL leads
// nowhere).
func TestAgentConfigRefusesAnEmptyRouteBeforeConnecting(t *testing.T) {
	c := cluster.DefaultAgent()
	c.URL = "nats://127.0.0.1:1"
	c.Routes = []string{"m", ""}
	var out bytes.Buffer
	err := cluster.RunAgent(t.Context(), c, &out, t.Logf)
	fe := fielderr.As(err)
	require.NotNil(t, fe, "%v", err)
	assert.Equal(t, "Routes", fe.Fields[0].Name)
	assert.Empty(t, out.String(), "nothing provisioned")
	c.Routes, c.MaxRoutes = nil, -1
	assert.Equal(t, "MaxRoutes", fielderr.As(cluster.RunAgent(t.Context(), c, &out, t.Logf)).Fields[0].Name, "the provision settings first")
}

// TestRunAgentNamesTheRouteThatFailedAndServesUntilCancelled: a route
// past MaxRoutes is a *FieldFailure of Routes (a failure of the run, its
// ErrConfig kept for errors.Is) after the routes before it were
// provisioned; with every route accepted the agent serves until its
// context ends, and Once returns at once.
func TestRunAgentNamesTheRouteThatFailedAndServesUntilCancelled(t *testing.T) {
	noCredsAround(t)
	srv := startServer(t)
	c := cluster.DefaultAgent()
	c.URL, c.DurableSamples, c.MaxRoutes, c.RouteQuota = srv.ClientURL(), false, 1, 1
	c.Routes = []string{"one", "two"}
	var out bytes.Buffer
	err := cluster.RunAgent(t.Context(), c, &out, t.Logf)
	var ff *cluster.FieldFailure
	require.True(t, errors.As(err, &ff), "%v", err)
	assert.Equal(t, "Routes", ff.Field)
	require.ErrorIs(t, err, cluster.ErrTooManyRoutes)
	assert.Contains(t, out.String(), `provisioned the consumer of route "one"`)

	c.Routes, c.Once = []string{"one"}, true
	require.NoError(t, cluster.RunAgent(t.Context(), c, &out, t.Logf))

	c.Once = false
	ctx, cancel := context.WithCancel(t.Context())
	notes := make(chan string, 2)
	done := make(chan error, 1)
	go func() {
		done <- cluster.RunAgent(ctx, c, &out, func(format string, args ...any) { notes <- fmt.Sprintf(format, args...) })
	}()
	select {
	case note := <-notes:
		assert.Contains(t, note, "serving workers' and coordinators' requests on "+srv.ClientURL())
	case err := <-done:
		t.Fatalf("RunAgent returned before its context ended: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("RunAgent returned before its context ended: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, "stopping", <-notes)
}
