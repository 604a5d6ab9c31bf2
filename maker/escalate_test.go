package maker_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hardModel is the "spread 0.2, hard steps agree" model: p 0.99
// on average, steps of very different difficulty, a hard step's errors
// all the same wrong answer.
func hardModel(t *testing.T, seed uint64) *sim.Model {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.P, cfg.WrongAnswers, cfg.DifficultySpread, cfg.HardAgree = seed, 0.99, 1, 0.2, 1
	m, err := sim.New(hanoi.Oracle{}, cfg)
	require.NoError(t, err)
	return m
}

// TestEscalationToAStrongerModel: on 8-disk Hanoi with hard steps whose
// errors agree, a fixed k = 3 decides some steps wrong; with escalation
// of contested steps to a stronger model (p 0.999, no spread), the same
// seeds have fewer wrong steps, every escalation is counted in the
// report and journaled, and a resume replays the counts.
func TestEscalationToAStrongerModel(t *testing.T) {
	strong := simModel(t, 77, 0.999)
	wrongPlain, wrongEsc, escalated := 0, 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		task, err := hanoi.New(8)
		require.NoError(t, err)
		s := &maker.Solver{Model: hardModel(t, seed)}
		s.Vote.K = 3
		_, err = s.Solve(context.Background(), task)
		require.NoError(t, err)
		wrongPlain += task.WrongSteps()

		task, err = hanoi.New(8)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "j.jsonl")
		j, err := journalfile.Create(path)
		require.NoError(t, err)
		s = &maker.Solver{Config: maker.Config{Escalation: &maker.Escalation{Policy: maker.EscalateModel, After: 6, Model: strong}}, Model: hardModel(t, seed), Journal: j}
		s.Vote.K = 3
		rep, err := s.Solve(context.Background(), task)
		require.NoError(t, err)
		require.NoError(t, j.Close())
		wrongEsc += task.WrongSteps()
		escalated += rep.Escalated
		assert.Equal(t, rep.Contested, rep.Escalated, "every contested step escalated")

		// Replayed from the journal: the same counts.
		j, err = journalfile.Open(path)
		require.NoError(t, err)
		task, err = hanoi.New(8)
		require.NoError(t, err)
		s.Journal = j
		again, err := s.Solve(context.Background(), task)
		require.NoError(t, err)
		require.NoError(t, j.Close())
		assert.Equal(t, rep.Escalated, again.Escalated, "seed %d: the journal holds the escalations", seed)
	}
	t.Logf("k=3 on 6 seeds: %d wrong steps; with escalation to a stronger model: %d wrong steps, %d steps escalated", wrongPlain, wrongEsc, escalated)
	assert.Positive(t, escalated)
	assert.Less(t, wrongEsc, wrongPlain)
}

func TestEscalationStopAndRaiseK(t *testing.T) {
	task, err := hanoi.New(8)
	require.NoError(t, err)
	s := &maker.Solver{Config: maker.Config{Escalation: &maker.Escalation{Policy: maker.EscalateStop, After: 4}}, Model: hardModel(t, 2)}
	s.Vote.K = 3
	rep, err := s.Solve(context.Background(), task)
	require.ErrorIs(t, err, maker.ErrContested)
	require.ErrorIs(t, err, maker.ErrStep)
	assert.Contains(t, err.Error(), "contested step stopped for review")
	assert.Less(t, rep.Steps, 255, "the run stopped at the contested step")

	task, err = hanoi.New(8)
	require.NoError(t, err)
	s = &maker.Solver{Config: maker.Config{Escalation: &maker.Escalation{Policy: maker.EscalateRaiseK, After: 4, K: 7}}, Model: hardModel(t, 2)}
	s.Vote.K = 3
	rep, err = s.Solve(context.Background(), task)
	require.NoError(t, err)
	assert.Positive(t, rep.Escalated)
	assert.Positive(t, rep.KHistogram[3])
	assert.Positive(t, rep.Contested, "the text shows the contested steps")

	for _, bad := range []maker.Escalation{{Policy: "retry"}, {Policy: maker.EscalateModel}, {Policy: maker.EscalateRaiseK, After: -1}} {
		task, err = hanoi.New(3)
		require.NoError(t, err)
		_, err = (&maker.Solver{Config: maker.Config{Escalation: &bad}, Model: hardModel(t, 1)}).Solve(context.Background(), task)
		assert.ErrorIs(t, err, maker.ErrConfig, "%+v", bad)
	}
}
