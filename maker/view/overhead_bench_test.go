package view_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/view"
)

// BenchmarkUnwatchedOverhead is what --ui costs a run when nobody is
// watching: a 10-disk Hanoi run on the simulated model with no latency
// (so that the view's own work is all there is to see), bare and with a
// view attached that no client reads. Compare the two ns/step figures of
// one run: the machine is shared and noisy, their ratio is the figure.
// With a model latency of hundreds of milliseconds a step, the difference
// is that much smaller a share of a step.
func BenchmarkUnwatchedOverhead(b *testing.B) {
	for _, attached := range []bool{false, true} {
		name := "bare"
		if attached {
			name = "view-attached"
		}
		b.Run(name, func(b *testing.B) {
			steps := 0
			for b.Loop() {
				s := solver(b)
				task, err := hanoi.New(10)
				require.NoError(b, err)
				if attached {
					view.Attach(s, view.SolverInfo(s, task))
				}
				rep, err := s.Solve(context.Background(), task)
				require.NoError(b, err)
				steps += rep.Steps
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
		})
	}
}
