package multiply_test

import (
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/families/multiply"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/require"
)

// BenchmarkTenByTenWall solves a 10×10 multiplication at 50 ms a model
// call and reports the wall time against the tree's critical path of
// decisions (wall/critical: 1 is siblings perfectly in parallel; the
// issue asks at most 1.5).
func BenchmarkTenByTenWall(b *testing.B) {
	sc := simConfig(1, 0.9, 3, 0)
	sc.Latency = sim.FixedLatency(50 * time.Millisecond)
	var wall, crit time.Duration
	for i := 0; i < b.N; i++ {
		res, err := run(b, multiply.Generate(uint64(i), 10, 10), sc, decompose.Settings{}, "")
		require.NoError(b, err)
		wall += res.Wall
		crit += res.CriticalPath
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/op")
	b.ReportMetric(crit.Seconds()/float64(b.N), "critical-s/op")
	ratio := float64(wall) / float64(crit)
	b.ReportMetric(ratio, "wall/critical")
	if ratio > 1.5 {
		b.Errorf("wall %v is %.2f× the critical path %v (at most 1.5× promised)", wall, ratio, crit)
	}
}
