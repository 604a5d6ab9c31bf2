package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maker solve --nats runs decomposition lines on the workers: every
// role's model is the engine's remote model of the --model's route, here
// served by a worker playing every role (decompose.SimModels.OneModel).
// With the simulated model a "problem" line is refused, saying why
// (maker worker --roles plays multiply and sort: workerroles_binary_test).
func TestSolveOverNATSRunsDecompositionLines(t *testing.T) {
	t.Parallel()
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	fam := multiply.Family{}
	sims, err := decompose.NewSim(fam, fam, decompose.SimConfig{Seed: 2, Roles: problems.SimRoles(decompose.SimRole{P: 0.95, Rivals: 2})})
	require.NoError(t, err)
	nc, err := cluster.Connect(srv.ClientURL(), "worker")
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	const route = "openai:roles"
	w, err := cluster.NewWorker(ctx, js, sims.OneModel(), cluster.WorkerConfig{Route: route, Inflight: 8})
	require.NoError(t, err)
	wg.Go(func() { assert.NoError(t, w.Run(ctx)) })

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "m", "multiply": {"a": "4821", "b": "93"}}`+"\n"), 0o644))
	out := filepath.Join(dir, "nats.jsonl")
	code, _, errOut := cli(t, "solve", tasks, "--out", out, "--nats", srv.ClientURL(), "--model", route, "--progress", "off")
	require.Equal(t, 0, code, errOut)
	res := readResults(t, out)["id:m"]
	assert.Equal(t, batch.StatusSolved, res.Status, res.Error)
	assert.JSONEq(t, `"448353"`, string(res.Answer))
	require.NotNil(t, res.Correct)
	assert.True(t, *res.Correct)
	assert.Positive(t, res.Samples)
	assert.Positive(t, w.Stats().Served, "the worker drew the samples")

	spec, err := os.ReadFile(filepath.Join(problemSpecs, "sort-spec.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sort.json"), spec, 0o644))
	require.NoError(t, os.WriteFile(tasks, []byte(`{"id": "p", "problem": {"spec": "sort.json", "input": {"list": [3, 1]}}}`+"\n"), 0o644))
	out = filepath.Join(dir, "sim.jsonl")
	code, _, _ = cli(t, "solve", tasks, "--out", out, "--nats", srv.ClientURL(), "--progress", "off")
	assert.Equal(t, 1, code)
	res = readResults(t, out)["id:p"]
	assert.NotEqual(t, batch.StatusSolved, res.Status)
	assert.Contains(t, res.Error, "needs a real --model")
}
