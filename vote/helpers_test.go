package vote

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// splitmix is SplitMix64's finaliser: a good 64-bit mixer.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// hash3 mixes three words: randomness per (seed, step, sample index), never
// from shared state.
func hash3(a, b, c uint64) uint64 { return splitmix(splitmix(splitmix(a)^b) ^ c) }

// unitFloat maps h to [0, 1).
func unitFloat(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// runSync drives the real decision core (racer) without goroutines: each
// wave is drawn at once and completed in reverse index order, so that every
// sample but the lowest waits in the window before it is committed.
func runSync[T any](cfg Config, draw func(i int) Sample[T]) (Result[T], error) {
	c, err := cfg.WithDefaults()
	if err != nil {
		return Result[T]{}, err
	}
	r := newRacer[T](c)
	var wave []Sample[T]
	for !r.over {
		n := r.plan()
		if r.over {
			break
		}
		if n <= 0 {
			panic("runSync: racer planned nothing with nothing in flight")
		}
		first := r.launch(n)
		wave = wave[:0]
		for j := range n {
			wave = append(wave, draw(first+j))
		}
		for j := n - 1; j >= 0; j-- {
			r.complete(first+j, wave[j])
		}
	}
	return r.result(0)
}

// goroutinesNow is the goroutines running now, by identity; settle(t,
// before) ignores them.
func goroutinesNow() goleak.Option { return goleak.IgnoreCurrent() }

// settle fails the test, with every goroutine's stack, if a goroutine that
// was not in before still runs after about 5s. Goroutines are told apart by
// identity, not counted: one of an earlier test still ending is in before,
// and cannot hide one this test left.
func settle(t *testing.T, before goleak.Option) {
	t.Helper()
	// goleak's own retries end within about half a second: too soon on a
	// loaded machine for goroutines that are ending.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := goleak.Find(before)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			require.FailNow(t, "goroutines leaked", "%v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// closedPStep and closedExpectedSamples are the paper's closed forms with
// one rival (package vote/laws computes them carefully; these plain forms
// are accurate enough at the p and k the race tests use): the race is
// checked against the theory, not against the planning code.
func closedPStep(p float64, k int) float64 {
	r := math.Pow((1-p)/p, float64(k))
	return 1 / (1 + r)
}

func closedExpectedSamples(p float64, k int) float64 {
	r := math.Pow((1-p)/p, float64(k))
	return float64(k) / (2*p - 1) * (1 - r) / (1 + r)
}
