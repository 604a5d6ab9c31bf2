package sim_test

import (
	"math"
	"testing"

	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDifficultySpread: each step's p is one draw per (seed, step), shared
// by its samples; over many steps its mean is P and its variance
// DifficultySpread × P(1-P); without a spread every step is at P.
func TestDifficultySpread(t *testing.T) {
	const steps = 20_000
	for _, c := range []struct{ p, spread float64 }{{0.9, 0.1}, {0.75, 0.3}, {0.99, 0.05}} {
		cfg := sim.Config{Seed: 7, P: c.p, WrongAnswers: 8, DifficultySpread: c.spread}
		m := newModel(t, counterOracle{}, cfg)
		var sum, sumSq float64
		for step := range steps {
			q := sim.Query{Prompt: "question: 1", Step: step, Identified: true}
			p := m.StepP(q)
			q.Index = 5
			require.Equal(t, p, m.StepP(q), "one p per step, whatever the sample")
			require.True(t, p >= 0 && p <= 1)
			sum += p
			sumSq += p * p
		}
		mean := sum / steps
		variance := sumSq/steps - mean*mean
		want := c.spread * c.p * (1 - c.p)
		se := math.Sqrt(want / steps) // the mean's standard error
		assert.InDelta(t, c.p, mean, 5*se, "%+v: mean", c)
		assert.InEpsilon(t, want, variance, 0.1, "%+v: variance", c)

		flat := newModel(t, counterOracle{}, sim.Config{Seed: 7, P: c.p})
		assert.Equal(t, c.p, flat.StepP(sim.Query{Prompt: "question: 1", Step: 3, Identified: true}))
	}
}

// TestDifficultyDrivesReplies: on each step the share of right replies
// follows that step's p, and on hard steps with HardAgree = 1 every wrong
// reply is the same wrong answer.
func TestDifficultyDrivesReplies(t *testing.T) {
	cfg := sim.Config{Seed: 3, P: 0.8, WrongAnswers: 8, DifficultySpread: 0.3, HardAgree: 1}
	m := newModel(t, counterOracle{}, cfg)
	hard, easyWrongVariants := 0, map[string]bool{}
	for step := range 300 {
		p := m.StepP(sim.Query{Prompt: sim.PromptText(msgs(1)), Step: step, Identified: true})
		wrong := map[string]bool{}
		right := 0
		const n = 60
		for i := range n {
			r := ask(m, withID(step, i), 1)
			require.NoError(t, r.err)
			if r.text == `{"answer": 2}` {
				right++
			} else {
				wrong[r.text] = true
				if p >= sim.Hard {
					easyWrongVariants[r.text] = true
				}
			}
		}
		if p < sim.Hard {
			hard++
			assert.LessOrEqual(t, len(wrong), 1, "step %d (p %.2f): the errors of a hard step agree", step, p)
		}
		assert.InDelta(t, p, float64(right)/n, 5*math.Sqrt(p*(1-p)/n)+1e-9, "step %d", step)
	}
	assert.Greater(t, hard, 10, "a spread of 0.3 around 0.8 makes some steps hard")
	assert.Greater(t, len(easyWrongVariants), 4, "the errors of other steps still spread")
}

func TestDifficultyConfig(t *testing.T) {
	for _, cfg := range []sim.Config{{P: 0.9, DifficultySpread: 1}, {P: 0.9, DifficultySpread: -0.1}, {P: 0.9, HardAgree: 1.5}, {P: 0.9, DifficultySpread: math.NaN()}} {
		_, err := sim.New(counterOracle{}, cfg)
		require.ErrorIs(t, err, sim.ErrConfig, "%+v", cfg)
	}
	m := newModel(t, counterOracle{}, sim.Config{P: 0.9})
	assert.NotContains(t, m.Identity(), "difficulty", "the identity of a model without a spread is unchanged")
	m = newModel(t, counterOracle{}, sim.Config{P: 0.9, DifficultySpread: 0.2, HardAgree: 0.5})
	assert.Contains(t, m.Identity(), "difficulty_spread=0.2 hard_agree=0.5")
}
