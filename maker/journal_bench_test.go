package maker

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"

	"github.com/mdap-go/mdap/vote"
)

// BenchmarkResume measures what resuming a long run costs: opening a
// journal of n steps and replaying it to the first new step, with a
// checkpoint every 4096 steps (the default) and without any. With
// checkpoints the replay is bounded by the checkpoint interval, whatever
// n; without, it grows with n. Compare the ns/op of the two within one
// run, and across n.
func BenchmarkResume(b *testing.B) {
	for _, n := range []int{16384, 65536} {
		for _, every := range []int{journal.DefaultCheckpointEvery, -1} {
			name := fmt.Sprintf("steps=%d/checkpoints=%v", n, every > 0)
			b.Run(name, func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "j.jsonl")
				j, err := journalfile.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				j.CheckpointEvery = every
				s := &Solver{Config: Config{Vote: vote.Config{K: 2, Parallel: 1}, MaxSteps: n}, Model: &scripted{reply: noisy}, Journal: j}
				if _, err := s.Solve(context.Background(), &snapCounter{counter: counter{target: n + 100}}); err == nil {
					b.Fatal("the run should stop at its step limit")
				}
				j.Close()
				b.ResetTimer()
				for b.Loop() {
					j, err := journalfile.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					task := &snapCounter{counter: counter{target: n + 100}}
					s := &Solver{Config: Config{Vote: vote.Config{K: 2, Parallel: 1}, MaxSteps: n}, Model: &scripted{reply: noisy}, Journal: j}
					if _, err := s.Solve(context.Background(), task); err == nil || task.n != n {
						b.Fatalf("resume: %v at %d", err, task.n)
					}
					b.ReportMetric(float64(task.applied), "replayed")
					j.Close()
				}
			})
		}
	}
}
