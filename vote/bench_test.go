package vote

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// Benchmarks of the race machinery with an instant drawer: what Race adds
// per sample. "agree" is a unanimous race with K = 16 (16 samples); in
// "contested" every third sample goes to a rival (48 samples at K = 16).
// The loop sub-benchmarks are the plain sequential rule in a few lines, for
// comparison in the same run.

var benchDraws = map[string]func(i int) uint64{
	"agree":     func(int) uint64 { return 1 },
	"contested": func(i int) uint64 { return 1 + uint64(i%3)/2 },
}

func BenchmarkRace(b *testing.B) {
	const k = 16
	ctx := context.Background()
	for _, name := range []string{"agree", "contested"} {
		keyOf := benchDraws[name]
		draw := func(_ context.Context, i int) Sample[int] {
			return Sample[int]{Value: i, Key: keyOf(i), Usage: Usage{Latency: 1}}
		}
		for _, par := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/parallel=%d", name, par), func(b *testing.B) {
				cfg := Config{K: k, Parallel: par}
				perSample(b, func() int {
					res, err := Race(ctx, cfg, draw)
					if err != nil {
						b.Fatal(err)
					}
					return res.Launched
				})
			})
		}
		b.Run(name+"/loop", func(b *testing.B) {
			perSample(b, func() int {
				votes := map[uint64]int{}
				for i := 0; ; i++ {
					s := draw(ctx, i)
					votes[s.Key]++
					first, second := 0, 0
					for _, n := range votes {
						if n > first {
							first, second = n, first
						} else if n > second {
							second = n
						}
					}
					if first-second >= k {
						return i + 1
					}
				}
			})
		})
	}
}

// perSample runs race b.N times and reports time and allocations per sample.
func perSample(b *testing.B, race func() int) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	samples := 0
	for b.Loop() {
		samples += race()
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(samples), "allocs/sample")
}
