package cluster_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// stoppingModel is a model that calls stop once it has been called
// after calls (0: never); its identity is the model's.
type stoppingModel struct {
	llms.Model
	calls *atomic.Int64
	after int64
	stop  func()
}

func (m stoppingModel) Identity() string { return maker.ModelIdentity(m.Model) }

func (m stoppingModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if n := m.calls.Add(1); m.after > 0 && n == m.after {
		m.stop()
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

// TestDecisionsOverNATSAreJournaled: a "multiply" task of maker solve
// --nats (SolveBatch) journals its decisions on the engine, as a local
// run does in its file. Stopped mid-tree, its task goes back on the
// queue; the run again resumes the decided nodes (the summary's Resumed)
// instead of starting over, and ends with the uninterrupted run's answer
// and samples, the workers' simulated model drawing every sample.
func TestDecisionsOverNATSAreJournaled(t *testing.T) {
	t.Parallel() // a server of its own; no lease or task queue of a one-second bound
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := startServer(t)
	fam := multiply.Family{}
	roles := map[decompose.Role]decompose.SimRole{}
	for _, r := range decompose.Roles {
		roles[r] = decompose.SimRole{P: 0.9, Rivals: 3}
	}
	sims, err := decompose.NewSim(fam, fam, decompose.SimConfig{Seed: 6, Roles: roles})
	require.NoError(t, err)
	var route string
	for range 2 { // two workers of the route
		_, js := connect(t, srv.ClientURL())
		w, err := cluster.NewWorker(ctx, js, sims.OneModel(), cluster.WorkerConfig{Inflight: 16})
		require.NoError(t, err)
		route = w.Route()
		t.Cleanup(runWorker(t, w))
	}
	_, js := connect(t, srv.ClientURL())
	d, err := cluster.NewDrawer(ctx, js, cluster.DrawerConfig{})
	require.NoError(t, err)
	defer d.Close()
	remote, err := d.Model(route)
	require.NoError(t, err)

	in := multiply.Generate(11, 6, 6)
	line, err := json.Marshal(map[string]any{"id": "m", "multiply": json.RawMessage(in), "seed": 6})
	require.NoError(t, err)
	// solve runs the batch of the one task on queue, its model stopping
	// the run after `after` calls (0: never), and returns its summary and
	// result line.
	solve := func(queue string, after int64) (batch.Summary, batch.Result, error) {
		dir := filepath.Join(t.TempDir(), queue)
		require.NoError(t, os.MkdirAll(dir, 0o700))
		jobs, err := batch.ReadJobs(strings.NewReader(string(line)+"\n"), dir)
		require.NoError(t, err)
		runCtx, stop := context.WithCancel(ctx)
		defer stop()
		calls := &atomic.Int64{}
		b := &batch.Builtin{
			Config: maker.Config{Price: maker.Price{InputPerMillion: 0.15, OutputPerMillion: 0.6}},
			Model:  func(batch.Job, sim.Oracle, uint64) (llms.Model, error) { return nil, assert.AnError },
			RoleModels: func(batch.Job) (map[decompose.Role]llms.Model, error) {
				return decompose.AllRoles(stoppingModel{Model: remote, calls: calls, after: after, stop: stop}), nil
			},
		}
		store, err := batch.OpenStore(filepath.Join(dir, "results.jsonl"), "")
		require.NoError(t, err)
		defer func() { require.NoError(t, store.Close()) }()
		sum, err := cluster.SolveBatch(runCtx, js, cluster.BatchConfig{
			Queue: queue, Jobs: jobs, Runner: batch.Runner{Build: b.Build}, Store: store, Concurrency: 1,
		})
		res, _ := store.Done(jobs[0])
		return sum, res, err
	}

	whole, want, err := solve("whole", 0)
	require.NoError(t, err)
	require.Equal(t, batch.StatusSolved, want.Status, "%+v", want)
	require.Positive(t, want.Samples)
	require.Positive(t, want.Cost)
	assert.Zero(t, whole.Resumed, "nothing to resume in a new queue")

	_, _, err = solve("cut", int64(want.Samples/2)) // stopped mid-tree
	require.ErrorIs(t, err, context.Canceled)
	again, got, err := solve("cut", 0)
	require.NoError(t, err)
	require.Equal(t, batch.StatusSolved, got.Status, "%+v", got)
	t.Logf("decisions %d, resumed %d; samples %d (uninterrupted %d)", got.Steps, again.Resumed, got.Samples, want.Samples)
	assert.Positive(t, again.Resumed, "decided nodes resumed from the engine's journal, not decided again")
	assert.Less(t, again.Resumed, got.Steps, "the stopped run had not decided them all")
	assert.JSONEq(t, string(want.Answer), string(got.Answer))
	assert.Equal(t, want.Samples, got.Samples, "the uninterrupted run's samples")
	assert.InDelta(t, want.Cost, got.Cost, 1e-12, "and cost")
	assert.Equal(t, want.Steps, got.Steps)
	assert.True(t, strings.HasPrefix(got.Journal, "nats:cut."), "the journal is the task's on the engine: %q", got.Journal)

	// maker nats ls and rm see it: a header and a line per decision.
	journalOf := func() *cluster.Leftover {
		left, err := cluster.List(ctx, js)
		require.NoError(t, err)
		for _, l := range left {
			if l.Kind == "journal" && "nats:"+l.Name == got.Journal {
				return &l
			}
		}
		return nil
	}
	l := journalOf()
	require.NotNil(t, l, "listed")
	assert.Equal(t, uint64(got.Steps+1), l.Messages)
	_, err = cluster.RemoveRun(ctx, js, "cut")
	require.NoError(t, err)
	assert.Nil(t, journalOf(), "removed with its queue")
}
