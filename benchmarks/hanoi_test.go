package benchmarks

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
)

func simModel(b *testing.B, seed uint64) *sim.Model {
	cfg := sim.DefaultConfig()
	cfg.Seed = seed
	m, err := sim.New(hanoi.Oracle{}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkHanoiRun solves Hanoi at growing sizes and reports the cost per
// step and the heap a finished run still holds (live-MB after a GC). Flat
// memory means live-MB stays put as steps grow 16-fold.
func BenchmarkHanoiRun(b *testing.B) {
	for _, disks := range []int{8, 12} {
		b.Run(fmt.Sprintf("disks=%d", disks), func(b *testing.B) {
			b.ReportAllocs()
			var samples, steps int
			var live uint64
			for i := 0; b.Loop(); i++ {
				task, err := hanoi.New(disks)
				if err != nil {
					b.Fatal(err)
				}
				s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: simModel(b, uint64(i))}
				rep, err := s.Solve(context.Background(), task)
				if err != nil || !task.Solved() {
					b.Fatalf("not solved: %v", err)
				}
				samples += rep.Launched
				steps += rep.Steps
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = ms.HeapAlloc
				runtime.KeepAlive(rep)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
			b.ReportMetric(float64(samples)/float64(steps), "samples/step")
			b.ReportMetric(float64(live)/(1<<20), "live-MB")
		})
	}
}

// BenchmarkRaceOverhead is the cost of one voted step with an instant,
// unanimous drawer: the orchestration overhead a model call hides.
func BenchmarkRaceOverhead(b *testing.B) {
	b.ReportAllocs()
	cfg := vote.Config{K: 3}
	for b.Loop() {
		_, err := vote.Race(context.Background(), cfg, func(ctx context.Context, i int) vote.Sample[int] {
			return vote.Sample[int]{Key: 1}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepLoop is the in-process step loop (maker.Solver on the sim,
// Hanoi), per sample.
func BenchmarkStepLoop(b *testing.B) {
	const disks = 10
	for _, par := range []int{0, 1} {
		b.Run(fmt.Sprintf("solver/parallel=%d", par), func(b *testing.B) {
			b.ReportAllocs()
			samples := 0
			for b.Loop() {
				task, _ := hanoi.New(disks)
				s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3, Parallel: par}}, Model: simModel(b, 0)}
				rep, err := s.Solve(context.Background(), task)
				if err != nil || !task.Solved() {
					b.Fatal(err)
				}
				samples += rep.Launched
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
		})
	}
}

// BenchmarkJournaled is the in-process step loop with a journal, per
// sample (against BenchmarkStepLoop/solver/parallel=0).
func BenchmarkJournaled(b *testing.B) {
	const disks = 10
	dir := b.TempDir()
	samples := 0
	for i := 0; b.Loop(); i++ {
		task, _ := hanoi.New(disks)
		j, err := journalfile.Create(fmt.Sprintf("%s/j%d.jsonl", dir, i))
		if err != nil {
			b.Fatal(err)
		}
		s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: simModel(b, 0), Journal: j}
		rep, err := s.Solve(context.Background(), task)
		if err != nil || !task.Solved() {
			b.Fatal(err)
		}
		_ = j.Close()
		samples += rep.Launched
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
}
