package batch

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// BenchmarkLimitsOverhead measures what the limits add to a call of a
// model that answers at once: compare the sub-benchmarks (a ratio; the
// absolute figures depend on the machine).
func BenchmarkLimitsOverhead(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, m llms.Model) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := m.GenerateContent(ctx, nil); err != nil {
					b.Error(err)
				}
			}
		})
	}
	b.Run("bare", func(b *testing.B) { run(b, &counting{}) })
	b.Run("limited", func(b *testing.B) {
		l, err := NewLimits(LimitConfig{MaxInFlight: 64, RPM: 1e12, Burst: 1 << 30})
		if err != nil {
			b.Fatal(err)
		}
		run(b, l.Wrap(&counting{}))
	})
}
