package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdminContextEndsAtOnceWhenTheServerRefusesTheRole: a worker's
// credential asking for the engine's list is refused by the server, which
// never answers the request itself: the context ends at once, and
// AdminErr says which credential was given and where the admin's is.
func TestAdminContextEndsAtOnceWhenTheServerRefusesTheRole(t *testing.T) {
	noCredsAround(t)
	srv, dir := startRoleServer(t)
	worker := cluster.ClientCreds{Path: cluster.SeedFile(dir, cluster.RoleWorker), PathName: "--nats-creds"}
	nc, js, err := cluster.Dial(srv.ClientURL(), worker, cluster.RoleWorker, t.Name())
	require.NoError(t, err)
	t.Cleanup(nc.Close)

	const timeout = time.Minute
	start := time.Now()
	ctx, cancel := cluster.AdminContext(t.Context(), nc, timeout, "maker nats ls", worker)
	defer cancel()
	_, err = cluster.List(ctx, js)
	require.Error(t, err)
	assert.Less(t, time.Since(start), timeout/2, "ended by the refusal, not the timeout")
	err = cluster.AdminErr(ctx, err)
	var na *cluster.NotAdminError
	require.True(t, errors.As(err, &na), "%v", err)
	assert.Contains(t, err.Error(), "maker nats ls needs the admin's credential, and was given the worker credential "+cluster.SeedFile(dir, cluster.RoleWorker)+" (--nats-creds)")
	assert.Contains(t, err.Error(), "--nats-creds "+cluster.SeedFile(dir, cluster.RoleAdmin), "the admin's seed beside it")

	admin := cluster.ClientCreds{Path: dir}
	anc, ajs, err := cluster.Dial(srv.ClientURL(), admin, cluster.RoleAdmin, t.Name())
	require.NoError(t, err)
	t.Cleanup(anc.Close)
	actx, acancel := cluster.AdminContext(t.Context(), anc, timeout, "maker nats ls", admin)
	defer acancel()
	_, err = cluster.List(actx, ajs)
	require.NoError(t, err)
	assert.NoError(t, cluster.AdminErr(actx, nil), "no refusal: the error as it was")
	other := errors.New("other")
	assert.Same(t, other, cluster.AdminErr(context.Background(), other))
}
