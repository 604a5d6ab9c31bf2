package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// simModel is a noisy simulated model for Towers of Hanoi: wrong answers
// and red flags make the races long enough to cancel samples.
func simModel(t testing.TB, seed uint64) *sim.Model {
	t.Helper()
	c := sim.DefaultConfig()
	c.Seed, c.P, c.FlagRate, c.ErrorRate = seed, 0.85, 0.05, 0.01
	m, err := sim.New(hanoi.Oracle{}, c)
	require.NoError(t, err)
	return m
}

// step is what must not depend on who drew a step's samples.
type step struct {
	Winner         any
	Key            string
	Votes          map[string]int
	Valid, Flagged int
	Errors         int
	Flags          map[string]int
}

// solveHanoi runs disks-disk Hanoi on m and returns the report and every
// step.
func solveHanoi(t testing.TB, m llms.Model, disks int, cfg vote.Config) (maker.Report, []step) {
	t.Helper()
	task, err := hanoi.New(disks)
	require.NoError(t, err)
	var steps []step
	s := &maker.Solver{
		Config: maker.Config{Vote: cfg},
		Model:  m,
		Progress: func(e maker.Event) {
			r := e.Record
			steps = append(steps, step{Winner: r.Winner.Value, Key: r.Key, Votes: r.Votes, Valid: r.Valid, Flagged: r.Flagged, Errors: r.Errors, Flags: r.Flags})
		},
	}
	rep, err := s.Solve(context.Background(), task)
	require.NoError(t, err)
	require.True(t, task.Solved())
	return rep, steps
}

func TestRunOverWorkersEqualsLocalRun(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	var workers []*cluster.Worker
	for range 3 {
		_, wjs := connect(t, srv.ClientURL())
		w := newWorker(t, wjs, simModel(t, 7), cluster.WorkerConfig{Inflight: 2})
		runWorker(t, w)
		workers = append(workers, w)
	}
	d := newDrawer(t, js, cluster.DrawerConfig{Timeout: 30 * time.Second})
	local := simModel(t, 7)
	remote, err := d.Model(local.Identity())
	require.NoError(t, err)
	assert.Equal(t, local.Identity(), maker.ModelIdentity(remote), "the journal records the same model")
	known, err := d.Served(context.Background(), local.Identity())
	require.NoError(t, err)
	assert.True(t, known)

	cfg := vote.Config{K: 3, Parallel: 3}
	want, wantSteps := solveHanoi(t, local, 5, cfg)
	got, gotSteps := solveHanoi(t, remote, 5, cfg)
	require.Equal(t, wantSteps, gotSteps, "every step's winner, key, votes and flags")
	assert.Equal(t, want.Steps, got.Steps)
	assert.Equal(t, want.Valid, got.Valid)
	assert.Equal(t, want.Flagged, got.Flagged)
	assert.Equal(t, want.Errors, got.Errors)
	assert.Equal(t, want.SampleHistogram, got.SampleHistogram)
	assert.Equal(t, want.Usage.OutputTokens, got.Usage.OutputTokens)
	assert.Equal(t, want.Usage.InputTokens, got.Usage.InputTokens)

	st := d.Stats()
	assert.Equal(t, st.Published, st.Replies+st.Withdrawn)
	served := func() (n int64) {
		for _, w := range workers {
			n += w.Stats().Served
		}
		return n
	}
	require.Eventually(t, func() bool { return served() >= st.Replies }, 5*time.Second, 10*time.Millisecond)
	for _, w := range workers {
		assert.Positive(t, w.Stats().Served, "every worker drew samples")
	}
}

// TestModelDeclaresToolsAsTheWorkersModel: over the engine, automatic
// tool declaration follows what the workers' model takes (WithNativeTools),
// as it would in process; without the option, tools go in the prompt.
func TestModelDeclaresToolsAsTheWorkersModel(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	d := newDrawer(t, js, cluster.DrawerConfig{})
	for _, c := range []struct {
		opts []cluster.ModelOption
		want maker.ToolDeclaration
	}{
		{nil, maker.DeclarePrompt},
		{[]cluster.ModelOption{cluster.WithNativeTools(false)}, maker.DeclarePrompt},
		{[]cluster.ModelOption{cluster.WithNativeTools(true)}, maker.DeclareNative},
	} {
		m, err := d.Model("openai:gpt-4.1-mini", c.opts...)
		require.NoError(t, err)
		got, err := maker.DeclareAuto.Resolve(m)
		require.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
}
