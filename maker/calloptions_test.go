package maker

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tmc/langchaingo/llms"
)

// TestCachedOptionsSetTheirValue: a cached option sets exactly the value
// asked, whatever was asked before (-0 apart from 0), and the caches stay
// bounded.
func TestCachedOptionsSetTheirValue(t *testing.T) {
	for range 2 { // the second round reads the cache
		for _, temp := range []float64{0, math.Copysign(0, -1), 0.1, 0.7, 1} {
			var o llms.CallOptions
			temperatureOptions.get(math.Float64bits(temp))(&o)
			assert.Equal(t, math.Float64bits(temp), math.Float64bits(o.Temperature), "%v", temp)
		}
		for _, n := range []int{1, 2, 750, 4096} {
			var o llms.CallOptions
			maxTokensOptions.get(n)(&o)
			seedOptions.get(n)(&o)
			assert.Equal(t, n, o.MaxTokens)
			assert.Equal(t, n, o.Seed)
		}
	}
	for i := range 2 * maxCachedOptions {
		var o llms.CallOptions
		seedOptions.get(10_000 + i)(&o)
		assert.Equal(t, 10_000+i, o.Seed)
	}
	assert.LessOrEqual(t, int(seedOptions.n.Load()), maxCachedOptions)
}
