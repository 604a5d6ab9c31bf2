package maker

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/tmc/langchaingo/llms"
)

// The call options of a sample (temperature, reply cap, seed) take one of
// few values in a run, but each llms.WithX builds a closure: three
// allocations a sample on the step loop's hot path. These caches build
// each option once per value and share it (an option only sets its value,
// so sharing is safe). A cache holds at most maxCachedOptions values;
// past that, options are built per call as before.

const maxCachedOptions = 256

type optionCache[K comparable] struct {
	m    sync.Map // K → llms.CallOption
	n    atomic.Int32
	make func(K) llms.CallOption
}

func (c *optionCache[K]) get(k K) llms.CallOption {
	if o, ok := c.m.Load(k); ok {
		return o.(llms.CallOption)
	}
	o := c.make(k)
	if c.n.Load() < maxCachedOptions {
		if _, loaded := c.m.LoadOrStore(k, o); !loaded {
			c.n.Add(1)
		}
	}
	return o
}

var (
	// keyed by the bits: -0 and 0 stay apart (they encode differently),
	// and a NaN finds its own
	temperatureOptions = &optionCache[uint64]{make: func(b uint64) llms.CallOption { return llms.WithTemperature(math.Float64frombits(b)) }}
	maxTokensOptions   = &optionCache[int]{make: llms.WithMaxTokens}
	seedOptions        = &optionCache[int]{make: llms.WithSeed}
)
