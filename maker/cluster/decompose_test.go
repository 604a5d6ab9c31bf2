package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Siblings over NATS workers: every role's model is the remote model of
// one route (cluster.Drawer.Model), whose workers play every role
// (SimModels.OneModel). The tree is decided as in process, sample for
// sample: the same answer, samples and cost.
func TestDecompositionOverNATSWorkers(t *testing.T) {
	t.Parallel() // a server of its own; no lease or task queue of a one-second bound
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	connect := func(name string) jetstream.JetStream {
		nc, err := cluster.Connect(srv.ClientURL(), name, nats.Timeout(30*time.Second))
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		require.NoError(t, err)
		return js
	}
	fam := multiply.Family{}
	roles := map[decompose.Role]decompose.SimRole{}
	for _, r := range decompose.Roles {
		roles[r] = decompose.SimRole{P: 0.9, Rivals: 3}
	}
	sc := decompose.SimConfig{Seed: 6, Roles: roles}
	price := maker.Price{InputPerMillion: 0.15, OutputPerMillion: 0.6}
	sims, err := decompose.NewSim(fam, fam, sc)
	require.NoError(t, err)
	var stops []func()
	var route string
	for i := range 2 { // two workers of the route
		w, err := cluster.NewWorker(ctx, connect("worker"), sims.OneModel(), cluster.WorkerConfig{Inflight: 16})
		require.NoError(t, err)
		route = w.Route()
		wctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(wctx) }()
		stops = append(stops, func() { stop(); assert.NoError(t, <-done, "worker %d", i) })
	}
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	d, err := cluster.NewDrawer(ctx, connect("coordinator"), cluster.DrawerConfig{})
	require.NoError(t, err)
	defer d.Close()
	remote, err := d.Model(route)
	require.NoError(t, err)

	in := multiply.Generate(11, 6, 6)
	st := decompose.Settings{Seed: 6}
	st.Solver.Price = price
	overNATS, err := decompose.Solve(ctx, fam, in, decompose.Config{Settings: st, Models: decompose.AllRoles(remote), Truth: fam})
	require.NoError(t, err)
	fresh, err := decompose.NewSim(fam, fam, sc) // in process, as if nothing had been drawn
	require.NoError(t, err)
	local, err := decompose.Solve(ctx, fam, in, decompose.Config{Settings: st, Models: fresh.Models(), Truth: fam, CoFailures: fresh})
	require.NoError(t, err)
	require.NotNil(t, overNATS.Correct)
	assert.True(t, *overNATS.Correct)
	assert.Equal(t, local.Answer, overNATS.Answer)
	assert.Equal(t, local.Samples, overNATS.Samples, "sample for sample as in process")
	assert.Equal(t, local.Nodes, overNATS.Nodes)
	for r, l := range local.Roles {
		assert.Equal(t, l.Decisions, overNATS.Roles[r].Decisions, r)
	}
	assert.Positive(t, d.Stats().Replies, "the workers drew the samples")
}
