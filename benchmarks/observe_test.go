package benchmarks

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestObserveSuite(t *testing.T) {
	t.Parallel() // its CPU figures are only asserted positive
	ticks := 0
	res, err := runObserve(context.Background(), Options{Quick: true, Seed: 1}, func() { ticks++ })
	require.NoError(t, err)
	assert.Equal(t, observeUnits(true), ticks)
	require.Len(t, res.Rows, len(observeConfigs))
	for i, r := range res.Rows {
		assert.Equal(t, observeConfigs[i], r.Config)
		assert.Positive(t, r.CPUPerSample)
		assert.Equal(t, res.Rows[0].Samples, r.Samples, "watching does not change the run")
	}
	assert.Zero(t, res.Rows[0].VsOff)
	var b strings.Builder
	writeObserve(&b, res)
	assert.Contains(t, b.String(), "| metrics+traces |")
}
