package benchmarks

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The engine suite measures the three transports side by side and the
// solve at 20 ms latency; the engine's waves travel as fewer jobs than
// samples, and one sample a job as one job a sample.
func TestEngineSuite(t *testing.T) {
	measuringSuite(t) // starts an embedded NATS server and solves at 20 ms latency
	rep, err := Run(context.Background(), Options{Suites: []string{"engine"}, Quick: true, Seed: 3})
	require.NoError(t, err)
	e := rep.EngineCost
	require.NotNil(t, e)
	require.Len(t, e.Rows, 3)
	for _, r := range e.Rows {
		assert.Positive(t, r.WallPerSample, r.Transport)
		assert.Positive(t, r.CPUPerSample, r.Transport)
		assert.LessOrEqual(t, r.RatioLo, r.Ratio)
		assert.LessOrEqual(t, r.Ratio, r.RatioHi)
	}
	assert.Equal(t, 1.0, e.Rows[0].Ratio, "core against itself")
	wave, single := e.Rows[1], e.Rows[2]
	assert.Less(t, wave.Jobs, int64(e.Samples), "a wave a job: fewer jobs than samples")
	assert.Equal(t, int64(e.Samples), single.Jobs, "one sample a job")
	assert.Greater(t, e.SolveRatio, 0.5)
	md := rep.Markdown()
	assert.Contains(t, md, "## The NATS engine")
	var goals []string
	for _, g := range rep.Goals {
		if strings.HasPrefix(g.Goal, "engine:") {
			goals = append(goals, g.Met)
		}
	}
	assert.Len(t, goals, 2)
	t.Log(md)
}
