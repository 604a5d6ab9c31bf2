package sim_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// cityOracle's right answer is {"city": "Paris"}, in four surface forms.
type cityOracle struct{}

func (cityOracle) Correct(sim.Query) (string, error) { return `{"city": "Paris"}`, nil }
func (cityOracle) Wrong(_ sim.Query, v int) (string, error) {
	return fmt.Sprintf(`{"city": "Lyon%d"}`, v), nil
}
func (cityOracle) Surface(_ sim.Query, form int) (string, error) {
	return fmt.Sprintf(`{"city": %q}`, []string{"Paris", "paris.", " PARIS ", "Paris!"}[form%4]), nil
}

func TestSurfaceFormsDrawRightAnswersInSeveralForms(t *testing.T) {
	m, err := sim.New(cityOracle{}, sim.Config{Seed: 3, P: 1, SurfaceForms: 4})
	require.NoError(t, err)
	seen := map[string]int{}
	for i := range 200 {
		ctx := maker.WithSampleID(context.Background(), maker.SampleID{Step: i / 10, Index: i % 10})
		resp, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "x")})
		require.NoError(t, err)
		seen[resp.Choices[0].Content]++
	}
	assert.Len(t, seen, 4, "every form drawn: %v", seen)
	for text, n := range seen {
		assert.Greater(t, n, 20, text)
	}
	assert.Contains(t, m.Identity(), "surface_forms=4")

	// One form: the oracle's Correct only, and the identity as before.
	m, err = sim.New(cityOracle{}, sim.Config{Seed: 3, P: 1})
	require.NoError(t, err)
	assert.NotContains(t, m.Identity(), "surface")

	_, err = sim.New(sim.OracleFunc(func(sim.Query) (string, error) { return `{}`, nil }), sim.Config{P: 1, SurfaceForms: 3})
	require.ErrorIs(t, err, sim.ErrConfig, "an oracle without surface forms")
	_, err = sim.New(cityOracle{}, sim.Config{P: 1, SurfaceForms: -1})
	require.ErrorIs(t, err, sim.ErrConfig)
}
