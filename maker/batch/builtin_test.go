package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestBuiltinAppliesTheJobsOverrides(t *testing.T) {
	var seeds []uint64
	b := &Builtin{
		Config: maker.Config{Vote: vote.Config{K: 5, Parallel: 5, MaxSamples: 200, MaxErrors: 4}, MaxSteps: 50, MaxTokens: 300, ToolFirst: true, Timeout: time.Minute}, Seed: 9,
		Model: func(_ Job, o sim.Oracle, seed uint64) (llms.Model, error) {
			seeds = append(seeds, seed)
			return sim.New(o, sim.DefaultConfig())
		},
	}
	jobs := readJobs(t, `{"id": "base", "hanoi": {"disks": 3}}
{"id": "over", "hanoi": {"disks": 3}, "k": 2, "seed": 4, "max_steps": 6, "max_samples": 20, "max_errors": 1}`)
	u, err := b.Build(context.Background(), jobs[0])
	require.NoError(t, err)
	assert.Equal(t, vote.Config{K: 5, Parallel: 5, MaxSamples: 200, MaxErrors: 4}, u.Solver.Vote)
	assert.Equal(t, 50, u.Solver.MaxSteps)
	assert.Equal(t, 300, u.Solver.MaxTokens)
	assert.True(t, u.Solver.ToolFirst, "every Config field reaches the job's solver, not a chosen few")
	assert.Equal(t, time.Minute, u.Solver.Timeout)
	u, err = b.Build(context.Background(), jobs[1])
	require.NoError(t, err)
	assert.Equal(t, vote.Config{K: 2, Parallel: 2, MaxSamples: 20, MaxErrors: 1}, u.Solver.Vote, "Parallel is capped at the job's k")
	assert.Equal(t, 6, u.Solver.MaxSteps)
	assert.Equal(t, []uint64{9, 4}, seeds)

	// A spec job's root and tools, relative to the tasks file.
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "work", "repo"), 0o755))
	spec := specPath(t, "find-version.json")
	jobs, err = ReadJobs(stringsReader(fmt.Sprintf(`{"id": "s", "spec": %q, "root": "work", "tools": "read_only,write_file"}
{"id": "d", "spec": %q}`, spec, spec)), dir)
	require.NoError(t, err)
	u, err = b.Build(context.Background(), jobs[0])
	require.NoError(t, err)
	wantRoot, err := filepath.EvalSymlinks(filepath.Join(dir, "work", "repo"))
	require.NoError(t, err)
	assert.Equal(t, wantRoot, u.Solver.Executor.Root(), "the job's root is the sandbox; the spec's root is inside it")
	assert.Equal(t, []string{"read_file", "grep"}, declaredNames(u.Solver.Tools), "the spec's tools are declared")
	assert.Contains(t, u.Solver.Executor.Policy().String(), "write_file")
	require.NoError(t, u.Close())
	u, err = b.Build(context.Background(), jobs[1])
	require.NoError(t, err)
	assert.Equal(t, "repo", filepath.Base(u.Solver.Executor.Root()), "the spec's own root by default")
	assert.NotContains(t, u.Solver.Executor.Policy().String(), "write_file", "read-only by default")
	require.NoError(t, u.Close())

	_, err = (&Builtin{}).Build(context.Background(), jobs[0])
	assert.ErrorIs(t, err, ErrBuiltin)
}

func declaredNames(tools []llms.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Function.Name)
	}
	return out
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// TestBuiltinEscalation: every hanoi and spec job gets the Escalation
// policy; under maker.EscalateModel its model is EscalationModel's for
// the job, at the job's seed plus one.
func TestBuiltinEscalation(t *testing.T) {
	var escSeeds []uint64
	open := func(_ Job, o sim.Oracle, seed uint64) (llms.Model, error) {
		c := sim.DefaultConfig()
		c.Seed = seed
		return sim.New(o, c)
	}
	b := &Builtin{Model: open, Seed: 3, Config: maker.Config{Escalation: &maker.Escalation{Policy: maker.EscalateModel, After: 8}},
		EscalationModel: func(j Job, o sim.Oracle, seed uint64) (llms.Model, error) {
			escSeeds = append(escSeeds, seed)
			return open(j, o, seed)
		}}
	require.NoError(t, b.Validate())
	jobs := readJobs(t, `{"id": "a", "hanoi": {"disks": 3}}
{"id": "b", "hanoi": {"disks": 3}, "seed": 7}`)
	for _, job := range jobs {
		u, err := b.Build(context.Background(), job)
		require.NoError(t, err)
		require.NotNil(t, u.Solver.Escalation)
		assert.Equal(t, 8, u.Solver.Escalation.After)
		assert.NotNil(t, u.Solver.Escalation.Model, "the job's escalation model")
	}
	assert.Equal(t, []uint64{4, 8}, escSeeds)
	assert.Nil(t, b.Escalation.Model, "the batch's policy is not changed")

	b.EscalationModel = nil
	assert.ErrorIs(t, b.Validate(), maker.ErrConfig, "EscalateModel needs a model")
	b.Escalation = &maker.Escalation{Policy: "shout"}
	assert.ErrorIs(t, b.Validate(), maker.ErrConfig)
	b.Escalation = &maker.Escalation{Policy: maker.EscalateStop}
	require.NoError(t, b.Validate())
	u, err := b.Build(context.Background(), jobs[0])
	require.NoError(t, err)
	assert.Equal(t, maker.EscalateStop, u.Solver.Escalation.Policy)
}

// TestCheckSharedEscalationRefusesTheRunsOwnModel: a shared escalation
// model that is the run's own model is refused before any job, one that
// differs (sim at Seed+1) passes, and without EscalateModel nothing is
// opened.
func TestCheckSharedEscalationRefusesTheRunsOwnModel(t *testing.T) {
	atSeed := func(_ Job, _ sim.Oracle, seed uint64) (llms.Model, error) { // shared: not the job's oracle
		cfg := sim.DefaultConfig()
		cfg.Seed = seed
		return sim.New(hanoi.Oracle{}, cfg)
	}
	b := &Builtin{Model: atSeed, Seed: 3, EscalationModel: atSeed, Config: maker.Config{Escalation: &maker.Escalation{Policy: maker.EscalateModel}}}
	require.NoError(t, b.CheckSharedEscalation(), "seed 4 is another model than seed 3")
	b.EscalationModel = func(_ Job, o sim.Oracle, _ uint64) (llms.Model, error) { return atSeed(Job{}, o, 3) }
	assert.ErrorIs(t, b.CheckSharedEscalation(), maker.ErrConfig, "the run's own model")
	b.Escalation.Policy = maker.EscalateRaiseK
	assert.NoError(t, b.CheckSharedEscalation(), "no escalation model to check")
}
