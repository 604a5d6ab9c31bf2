package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCoordinatorConfigNamesTheFieldItRefuses(t *testing.T) {
	t.Parallel()
	good := cluster.CoordinatorConfig{URL: "nats://127.0.0.1:4222", Keep: cluster.DefaultRetention}
	require.NoError(t, good.Validate())
	onRun := good
	onRun.Run, onRun.MinWorkers = "nightly-1", vote.MaxVoters
	require.NoError(t, onRun.Validate())
	for _, c := range []struct {
		field string
		edit  func(*cluster.CoordinatorConfig)
		fix   string
	}{
		{"MinWorkers", func(c *cluster.CoordinatorConfig) { c.MinWorkers = -1 }, "use 1 to"},
		{"MinWorkers", func(c *cluster.CoordinatorConfig) { c.MinWorkers = vote.MaxVoters + 1 }, "or 0 for the default"},
		{"MinWorkers", func(c *cluster.CoordinatorConfig) { c.MinWorkers, c.URL = -1, "" }, "use 1 to"}, // first, before the URL
		{"URL", func(c *cluster.CoordinatorConfig) { c.URL = "" }, "want nats://HOST:PORT"},
		{"URL", func(c *cluster.CoordinatorConfig) { c.URL = "http://127.0.0.1:4222" }, "want nats://HOST:PORT"},
		{"Keep", func(c *cluster.CoordinatorConfig) { c.Keep = cluster.MinRetention - time.Second }, "use at least 1m"},
		{"Run", func(c *cluster.CoordinatorConfig) { c.Run = "a/b" }, "1 to 64 letters"},
	} {
		cfg := good
		c.edit(&cfg)
		err := cfg.Validate()
		require.ErrorIs(t, err, cluster.ErrConfig, c.field)
		fe := fielderr.As(err)
		require.NotNil(t, fe, c.field)
		assert.Equal(t, c.field, fe.Fields[0].Name)
		assert.Contains(t, fe.Fix, c.fix)
	}
	edge := good
	edge.Keep = cluster.MinRetention
	assert.NoError(t, edge.Validate(), "MinRetention itself is allowed")
}

func TestFollowVotersAsksAgainOnlyAfterEveryAndKeepsItsNumberOnAFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	asked, serving := 0, 3
	var fail error
	count := func(context.Context) (int, error) { asked++; return serving, fail }

	slow := cluster.FollowVoters(1, time.Hour, count)
	assert.Equal(t, 1, slow(ctx))
	assert.Equal(t, 1, slow(ctx))
	assert.Zero(t, asked, "not asked again within every")

	follow := cluster.FollowVoters(1, 0, count)
	assert.Equal(t, 2, follow(ctx), "three identities serve: two voters")
	serving = 1
	assert.Equal(t, 1, follow(ctx), "one left: one voter")
	serving = 0
	assert.Equal(t, 1, follow(ctx), "none serving: still one")
	serving, fail = 5, errors.New("no answer")
	assert.Equal(t, 1, follow(ctx), "a failed count keeps the number")
	fail = nil
	assert.Equal(t, 2, follow(ctx))
	serving, fail = 0, errors.New("no answer")
	assert.Equal(t, 2, follow(ctx), "a hiccup does not drop the second voter")
	assert.Equal(t, 6, asked)
}

func TestSpecPrice(t *testing.T) {
	t.Parallel()
	p, ok := cluster.SpecPrice("openai:gpt-4o-mini=1/2", 5, 6)
	require.True(t, ok)
	assert.Equal(t, maker.Price{InputPerMillion: 1, OutputPerMillion: 2}, p, "the spec's own price wins over in and out")

	list, ok := cluster.SpecPrice("openai:gpt-4o-mini", 0, 0)
	require.True(t, ok, "a well-known model has a list price")
	assert.Positive(t, list.OutputPerMillion)
	over, ok := cluster.SpecPrice("openai:gpt-4o-mini", 7, 0)
	require.True(t, ok)
	assert.Equal(t, 7.0, over.InputPerMillion)
	assert.Equal(t, list.OutputPerMillion, over.OutputPerMillion, "out 0 keeps the list price")

	_, ok = cluster.SpecPrice("openai:my-local-model", 0, 0)
	assert.False(t, ok, "an unknown model without in or out")
	mine, ok := cluster.SpecPrice("openai:my-local-model", 0, 3)
	require.True(t, ok)
	assert.Equal(t, maker.Price{OutputPerMillion: 3}, mine)
	_, ok = cluster.SpecPrice("sim", 1, 1)
	assert.False(t, ok, "the simulated model: the flags' price applies")
	_, ok = cluster.SpecPrice("nonsense:::", 1, 1)
	assert.False(t, ok)
}

func TestSpecModelIsPricedAndDeclaresNativeToolsByItsRoute(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{})

	m, err := d.SpecModel("openai:gpt-4o-mini", "openai:gpt-4o-mini=1/2", 0, 0)
	require.NoError(t, err)
	priced, ok := m.(maker.Priced)
	require.True(t, ok, "a priced spec gives a maker.Priced model")
	assert.Equal(t, maker.Price{InputPerMillion: 1, OutputPerMillion: 2}, priced.Price())
	native, ok := m.(maker.NativeToolModel)
	require.True(t, ok, "every method of the Drawer's model is kept")
	assert.True(t, native.NativeTools(), "an OpenAI route takes native tools")
	assert.Equal(t, "openai:gpt-4o-mini", maker.ModelIdentity(m))

	sim, err := d.SpecModel("sim-route", "sim", 1, 1)
	require.NoError(t, err)
	_, ok = sim.(maker.Priced)
	assert.False(t, ok, "the simulated model carries no price of its own")
	assert.False(t, sim.(maker.NativeToolModel).NativeTools())

	_, err = d.SpecModel("", "sim", 0, 0)
	assert.ErrorIs(t, err, cluster.ErrConfig, "the Drawer's own refusal")
}

func TestBatchQueueNameIsTheSameForTheSameBatchOnly(t *testing.T) {
	t.Parallel()
	a := cluster.BatchQueueName([]byte("tasks"), "sim", 3, 750, 1)
	assert.Equal(t, a, cluster.BatchQueueName([]byte("tasks"), "sim", 3, 750, 1))
	assert.Regexp(t, `^solve-[0-9a-f]{12}$`, a)
	require.NoError(t, cluster.CheckRunName(a), "a queue name is a run name")
	for _, other := range []string{
		cluster.BatchQueueName([]byte("tasks2"), "sim", 3, 750, 1),
		cluster.BatchQueueName([]byte("tasks"), "openai:x", 3, 750, 1),
		cluster.BatchQueueName([]byte("tasks"), "sim", 4, 750, 1),
		cluster.BatchQueueName([]byte("tasks"), "sim", 3, 751, 1),
		cluster.BatchQueueName([]byte("tasks"), "sim", 3, 750, 2),
	} {
		assert.NotEqual(t, a, other)
	}
}

func TestProvisionConfigRefusesAJobPastNATSLargestMessage(t *testing.T) {
	t.Parallel()
	require.NoError(t, cluster.ProvisionConfig{JobBytes: cluster.MaxJobBytes}.Validate())
	err := cluster.ProvisionConfig{JobBytes: cluster.MaxJobBytes + 1}.Validate()
	require.ErrorIs(t, err, cluster.ErrConfig)
	fe := fielderr.As(err)
	require.NotNil(t, fe)
	assert.Equal(t, "JobBytes", fe.Fields[0].Name)
	assert.Equal(t, "use at most 1048576, NATS's largest message", fe.Fix)
}

// TestJobModelsDrawEachJobFromItsRoute: a batch's jobs over a Drawer
// draw from the route of their seed (the simulated model's identity), a
// real model's from its spec, priced; the simulated model answers Towers
// of Hanoi only.
func TestJobModelsDrawEachJobFromItsRoute(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{})
	r := runsetup.Run{Models: []string{"sim"}, Settings: runsetup.DefaultSettings(), Sim: sim.DefaultConfig()}
	open := d.JobModels(r)
	m, err := open(batch.Job{Hanoi: &batch.HanoiJob{}}, hanoi.Oracle{}, 5)
	require.NoError(t, err)
	assert.Contains(t, maker.ModelIdentity(m), "sim seed=5 ")
	_, err = open(batch.Job{Spec: "s.json"}, nil, 5)
	require.ErrorContains(t, err, "answers Towers of Hanoi only")

	r.Models, r.Settings.InputPrice = []string{"openai:gpt-4o-mini"}, 7
	m, err = d.JobModels(r)(batch.Job{Spec: "s.json"}, nil, 5)
	require.NoError(t, err)
	assert.Equal(t, "openai:gpt-4o-mini", maker.ModelIdentity(m))
	assert.Equal(t, 7.0, m.(maker.Priced).Price().InputPerMillion)
}

// TestSimRoleModelsDrawEveryRoleFromTheFamilysWorkers: a family line's
// roles all draw from the route of the workers playing its family at
// its seed; a problem spec's line is refused.
func TestSimRoleModelsDrawEveryRoleFromTheFamilysWorkers(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{})
	roles := decompose.SimConfig{Roles: problems.SimRoles(decompose.SimRole{P: 0.9, Rivals: 2})}
	open := d.SimRoleModels(roles, 3, "sim", 0, 0)
	seed := uint64(9)
	ms, err := open(batch.Job{Family: "multiply", Seed: &seed})
	require.NoError(t, err)
	roles.Seed = 9
	want, err := problems.SimModels("multiply", roles)
	require.NoError(t, err)
	for _, r := range decompose.Roles {
		assert.Equal(t, maker.ModelIdentity(want.OneModel()), maker.ModelIdentity(ms[r]), r)
	}
	_, err = open(batch.Job{Problem: &batch.ProblemJob{}})
	require.ErrorContains(t, err, `a "problem" task over --nats needs a real --model`)
}

// TestRunBatchQueueNameIsTheRunsRouteAndSettings: a run's batch queue is
// BatchQueueName of its route, k, reply cap and seed; another seed
// (part of the simulated model's route) is another queue.
func TestRunBatchQueueNameIsTheRunsRouteAndSettings(t *testing.T) {
	t.Parallel()
	r := runsetup.Run{Models: []string{"sim"}, Settings: runsetup.DefaultSettings(), Sim: sim.DefaultConfig()}
	route, err := r.Route(hanoi.Oracle{})
	require.NoError(t, err)
	name, err := cluster.RunBatchQueueName([]byte("tasks"), r)
	require.NoError(t, err)
	assert.Equal(t, cluster.BatchQueueName([]byte("tasks"), route, r.Settings.Margin.K, r.Settings.MaxTokens, r.Sim.Seed), name)
	r.Sim.Seed++
	other, err := cluster.RunBatchQueueName([]byte("tasks"), r)
	require.NoError(t, err)
	assert.NotEqual(t, name, other)
}
