package sim_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDriftChangesP: with Drift, a valid reply's chance of being right is
// P before the first change and each change's P from its step on, by the
// sample's identity; the identity names the schedule.
func TestDriftChangesP(t *testing.T) {
	cfg := sim.Config{Seed: 5, P: 1, WrongAnswers: 1, Drift: []sim.PChange{{Step: 100, P: 0.5}, {Step: 200, P: 0.9}}}
	assert.Equal(t, 1.0, cfg.PAt(0))
	assert.Equal(t, 1.0, cfg.PAt(99))
	assert.Equal(t, 0.5, cfg.PAt(100))
	assert.Equal(t, 0.5, cfg.PAt(199))
	assert.Equal(t, 0.9, cfg.PAt(200))
	m := newModel(t, counterOracle{}, cfg)
	assert.Contains(t, m.Identity(), " drift=100:0.5,200:0.9")
	assert.NotContains(t, newModel(t, counterOracle{}, sim.Config{P: 0.9}).Identity(), "drift", "an identity without drift is as before")

	right := [3]int{}
	const n = 20
	for step := range 300 {
		assert.Equal(t, cfg.PAt(step), m.StepP(sim.Query{Step: step, Identified: true}))
		for i := range n {
			r := ask(m, withID(step, i), 1)
			require.NoError(t, r.err)
			if r.text == `{"answer": 2}` {
				right[step/100]++
			}
		}
	}
	assert.Equal(t, 100*n, right[0], "steps 0-99 at p = 1: every reply right")
	// 2,000 replies at p = 0.5: 1,000 ± 5 sd (sd 22); at 0.9: 1,800 ± 5 sd (sd 13).
	assert.InDelta(t, 1000, right[1], 112)
	assert.InDelta(t, 1800, right[2], 67)

	// With a spread, each step's p is drawn around the drifted P.
	spread := cfg
	spread.DifficultySpread = 0.1
	spread.Drift = []sim.PChange{{Step: 1000, P: 0.6}}
	spread.P = 0.95
	ms := newModel(t, counterOracle{}, spread)
	var early, late float64
	for step := range 2000 {
		p := ms.StepP(sim.Query{Prompt: "question: 1", Step: step, Identified: true})
		if step < 1000 {
			early += p / 1000
		} else {
			late += p / 1000
		}
	}
	assert.InDelta(t, 0.95, early, 0.01)
	assert.InDelta(t, 0.6, late, 0.02)
}

func TestDriftValidated(t *testing.T) {
	for _, d := range [][]sim.PChange{
		{{Step: 0, P: 0.5}},
		{{Step: 10, P: 0.5}, {Step: 10, P: 0.6}},
		{{Step: 10, P: 0.5}, {Step: 5, P: 0.6}},
		{{Step: 10, P: 0}},
		{{Step: 10, P: 1.5}},
	} {
		err := sim.Config{P: 0.9, Drift: d}.Validate()
		require.ErrorIs(t, err, sim.ErrConfig, "%+v", d)
		assert.Contains(t, err.Error(), "Drift[")
	}
	assert.NoError(t, sim.Config{P: 0.9, Drift: []sim.PChange{{Step: 1, P: 1}}}.Validate())
}
