package vote

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneRival draws the right answer (key 1) with probability p, else the one
// rival (key 2), as a function of (seed, step, index) only.
func oneRival(seed uint64, step int, p float64) func(i int) Sample[int] {
	return func(i int) Sample[int] {
		key := uint64(2)
		if unitFloat(hash3(seed, uint64(step), uint64(i))) < p {
			key = 1
		}
		return Sample[int]{Value: i, Key: key, Usage: Usage{InputTokens: 1, Latency: 1}}
	}
}

// TestExpectedSamplesMatchesDecisionCore runs simulated steps per (p, k)
// through the racer, the decision core Race uses, and compares the mean
// number of votes with ExpectedSamples and the share of right winners with
// PStep, within 5 standard errors estimated from the runs.
func TestExpectedSamplesMatchesDecisionCore(t *testing.T) {
	const steps = 5_000
	for _, p := range []float64{0.7, 0.9, 0.99} {
		for _, k := range []int{1, 2, 3, 5} {
			seed := hash3(math.Float64bits(p), uint64(k), 99)
			var sum, sumSq float64
			right, odd := 0, 0
			for step := range steps {
				res, err := runSync(Config{K: k}, oneRival(seed, step, p))
				if err != nil || res.Counts != (Counts{Launched: res.Valid, Valid: res.Valid}) || res.Launched != res.Usage.InputTokens {
					odd++
				}
				v := float64(res.Valid)
				sum, sumSq = sum+v, sumSq+v*v
				if res.Key == 1 {
					right++
				}
			}
			require.Zero(t, odd, "p=%v k=%d: steps with an error, a sample not valid, or unpaid", p, k)
			mean := sum / steps
			se := math.Sqrt((sumSq/steps - mean*mean) / (steps - 1))
			want := closedExpectedSamples(p, k)
			assert.InDelta(t, want, mean, 5*se+1e-12, "p=%v k=%d: mean votes %.4f, E[N] %.4f", p, k, mean, want)
			q := closedPStep(p, k)
			share := float64(right) / steps
			assert.InDelta(t, q, share, 5*math.Sqrt(q*(1-q)/steps)+1.0/steps, "p=%v k=%d: right share %.5f, PStep %.5f", p, k, share, q)
		}
	}
}

// TestRaceAgreesWithDecisionCore shows that the statistical test above
// speaks for Race: on the same draws, full Race calls at several Parallel
// settings return exactly what the synchronous driver of the core returns.
func TestRaceAgreesWithDecisionCore(t *testing.T) {
	ctx := context.Background()
	for _, p := range []float64{0.7, 0.99} {
		for _, k := range []int{1, 3, 5} {
			seed := hash3(math.Float64bits(p), uint64(k), 99)
			for _, par := range []int{1, 3, 8} {
				cfg := Config{K: k, Parallel: par}
				for step := range 150 {
					draw := oneRival(seed, step, p)
					want, err := runSync(cfg, draw)
					require.NoError(t, err)
					got, err := Race(ctx, cfg, func(_ context.Context, i int) Sample[int] { return draw(i) })
					require.NoError(t, err)
					name := fmt.Sprintf("p=%v k=%d parallel=%d step %d", p, k, par, step)
					require.Equal(t, want.Key, got.Key, name)
					require.Equal(t, want.Winner, got.Winner, name)
					require.Equal(t, want.Votes, got.Votes, name)
					require.Equal(t, want.Valid, got.Valid, name)
					require.Equal(t, want.Launched, got.Launched, name)
					require.Equal(t, want.Usage.InputTokens, got.Usage.InputTokens, name)
				}
			}
		}
	}
}
