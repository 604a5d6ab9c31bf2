package spec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// surfaceOracle answers surfaceSpec's steps for the simulated model: the
// right answer is Paris, 21 degrees, tags eu and fr; its 32 surface forms
// are the city in four spellings, the temperature in four formats within
// the 0.5 tolerance (21, 21.000000000000004, 21.2, 20.9) and the tags in
// either order.
type surfaceOracle struct{ steps int }

func (o surfaceOracle) answer(step int, city, temp, tags string) string {
	return fmt.Sprintf(`{"state": {"n": %d, "city": %q, "temp": %s, "tags": %s}, "done": %v}`, step+1, city, temp, tags, step+1 >= o.steps)
}

func (o surfaceOracle) Correct(q sim.Query) (string, error) {
	return o.answer(q.Step, "Paris", "21", `["eu", "fr"]`), nil
}

func (o surfaceOracle) Wrong(q sim.Query, v int) (string, error) {
	return o.answer(q.Step, "Lyon", fmt.Sprint(25+v%4), `["eu"]`), nil
}

func (o surfaceOracle) Surface(q sim.Query, f int) (string, error) {
	tags := `["eu", "fr"]`
	if (f/16)%2 == 1 {
		tags = `["fr", "eu"]`
	}
	return o.answer(q.Step, []string{"Paris", "paris.", " PARIS ", "Paris!"}[f%4],
		[]string{"21", "21.000000000000004", "21.2", "20.9"}[(f/4)%4], tags), nil
}

// surfaceRow is one row of the surface-forms comparison: over seeds runs,
// samples per decided step, wrong steps and undecided runs.
type surfaceRow struct {
	samples, decided, wrong, undecided int
}

func (r surfaceRow) perStep() float64 { return float64(r.samples) / float64(r.decided) }

// runSurfaceRow runs steps-step surface tasks on the sim at p over seeds.
func runSurfaceRow(t testing.TB, steps int, p float64, seeds int, annotated bool, forms int) surfaceRow {
	var row surfaceRow
	s := surfaceSpec(t, steps, annotated)
	for seed := range seeds {
		model, err := sim.New(surfaceOracle{steps: steps}, sim.Config{Seed: uint64(seed), P: p, WrongAnswers: 4, SurfaceForms: forms})
		require.NoError(t, err)
		solver := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3, MaxSamples: 60}}, Model: model,
			Progress: func(e maker.Event) {
				st := e.Record.Winner.Value.(map[string]any)["state"].(map[string]any)
				if !strings.EqualFold(strings.Trim(st["city"].(string), " .!"), "paris") {
					row.wrong++
				}
			}}
		rep, err := solver.Solve(context.Background(), New(s))
		row.samples += rep.Launched
		row.decided += rep.Steps
		if err != nil {
			require.True(t, errors.Is(err, vote.ErrUndecided), "%v", err)
			row.undecided++
		}
	}
	return row
}

// TestSimSurfaceFormsRow: the simulated model in its surface-forms mode
// (32 forms of the right answer) over 20 seeds of 30 steps at p = 0.8,
// k = 3: with the spec's annotations every step is decided within
// 1.2x the samples per step of the same model answering in one form; with
// exact keys the same replies split: far more samples per step and runs
// that stop undecided.
func TestSimSurfaceFormsRow(t *testing.T) {
	const steps, p, seeds = 30, 0.8, 20
	one := runSurfaceRow(t, steps, p, seeds, false, 0)
	matched := runSurfaceRow(t, steps, p, seeds, true, 32)
	exact := runSurfaceRow(t, steps, p, seeds, false, 32)
	for _, r := range []struct {
		name string
		surfaceRow
	}{{"one form, exact keys", one}, {"32 forms, declared matching", matched}, {"32 forms, exact keys", exact}} {
		t.Logf("%-28s %6.2f samples/step, %d wrong steps, %d of %d runs undecided (%d steps decided)", r.name, r.perStep(), r.wrong, r.undecided, seeds, r.decided)
	}
	require.Zero(t, one.undecided)
	assert.Zero(t, matched.undecided, "every step decided with the annotations")
	assert.Equal(t, steps*seeds, matched.decided)
	// Wrong steps are the vote's own error at p = 0.8, k = 3 (about 0.3%
	// of steps, the runs' prompts differing with the winners' forms, so
	// the draws do too); with exact keys the split right answer loses to
	// a wrong one that repeats.
	assert.LessOrEqual(t, float64(matched.wrong), 0.01*float64(matched.decided))
	assert.Greater(t, float64(exact.wrong)/float64(exact.decided), 10*float64(matched.wrong+1)/float64(matched.decided))
	assert.LessOrEqual(t, matched.perStep(), 1.2*one.perStep(), "within 1.2x the samples of one form")
	assert.Greater(t, exact.perStep(), 2*matched.perStep(), "exact keys: over twice the samples per step")
	assert.Positive(t, exact.undecided, "exact keys: runs stop undecided")
}

// TestSimRefusesASpecWithoutScript: the simulated model answers a spec
// task from its script, so sim.New refuses a spec with none (Oracle is a
// sim.Checker), saying what to add.
func TestSimRefusesASpecWithoutScript(t *testing.T) {
	_, err := sim.New(Oracle{Spec: &Spec{}}, sim.DefaultConfig())
	require.ErrorIs(t, err, ErrSpec)
	assert.Contains(t, err.Error(), `"script" is missing`)
	assert.Contains(t, err.Error(), `add a "script" of the correct replies`)
	_, err = sim.New(Oracle{Spec: &Spec{Script: []ScriptStep{{Reply: []byte(`{}`)}}}}, sim.DefaultConfig())
	assert.NoError(t, err, "a spec with a script is answered")
}
