package maker_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
)

// BenchmarkJournalOverhead solves Towers of Hanoi on the simulated model
// without a journal,
// with a file journal and with a keyed one, the three alternately within
// each iteration, and reports the process's CPU per step of each
// (user + system, the background fsync and the collector included) and
// the journal's ratios to none. The machine's load moves all three alike;
// compare within one run. MDAP_BENCH_DISKS sets the size (default 10).
func BenchmarkJournalOverhead(b *testing.B) {
	disks := 10
	if s := os.Getenv("MDAP_BENCH_DISKS"); s != "" {
		disks = atoi(s)
	}
	cfg := sim.DefaultConfig()
	cfg.Seed = 1
	type variant struct {
		name string
		key  string
		on   bool
	}
	variants := []variant{{"none", "", false}, {"file", "", true}, {"keyed", "0123456789abcdef0123456789abcdef", true}}
	if only := os.Getenv("MDAP_BENCH_ONLY"); only != "" {
		variants = slices.DeleteFunc(variants, func(v variant) bool { return v.name != only && v.name != "none" })
	}
	dir := b.TempDir()
	cpu := make([]time.Duration, len(variants))
	steps := 0
	for b.Loop() {
		for i, v := range variants {
			b.Setenv(journal.KeyEnv, v.key)
			m, err := sim.New(hanoi.Oracle{}, cfg)
			if err != nil {
				b.Fatal(err)
			}
			task, _ := hanoi.New(disks)
			s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: m}
			path := filepath.Join(dir, "j.jsonl")
			_ = os.Remove(path)
			runtime.GC()
			c0 := cpuNow()
			if v.on {
				if s.Journal, err = journalfile.Create(path); err != nil {
					b.Fatal(err)
				}
			}
			rep, err := s.Solve(context.Background(), task)
			if err != nil || !task.Solved() {
				b.Fatalf("not solved: %v", err)
			}
			if v.on {
				if err := s.Journal.Close(); err != nil {
					b.Fatal(err)
				}
			}
			cpu[i] += cpuNow() - c0
			if i == 0 {
				steps += rep.Steps
			}
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(cpu[i].Nanoseconds())/float64(steps), v.name+"-cpu-ns/step")
		if i > 0 {
			b.ReportMetric(float64(cpu[i])/float64(cpu[0]), v.name+"/none")
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
