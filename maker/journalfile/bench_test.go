package journalfile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
)

// hanoiRecords returns n step records shaped like a 13-disk Towers of
// Hanoi run's (an answer of a move and three pegs, one vote key, usage),
// each different.
func hanoiRecords(n int) []journal.StepRecord {
	num := func(x int) any { return json.Number(strconv.Itoa(x)) }
	recs := make([]journal.StepRecord, n)
	for i := range recs {
		pegs := []any{[]any{}, []any{}, []any{}}
		for d := 13; d >= 1; d-- {
			p := (i + d) % 3
			pegs[p] = append(pegs[p].([]any), num(d))
		}
		key := strconv.FormatUint(uint64(i)*0x9e3779b97f4a7c15, 16)
		recs[i] = journal.StepRecord{Step: i, K: 3, Key: key,
			Winner:  intent.Output{Value: map[string]any{"move": []any{num(1 + i%13), num(i % 3), num((i + 1) % 3)}, "next_state": pegs}},
			Votes:   map[string]int{key: 3},
			Counts:  vote.Counts{Launched: 3, Valid: 3},
			Usage:   vote.Usage{InputTokens: 1575, OutputTokens: 63, Latency: time.Duration(40000 + i%9000), Requests: 3},
			Elapsed: time.Duration(180000 + i%50000),
		}
	}
	return recs
}

// BenchmarkJournalStep measures what the journal costs a step: encoding
// the record, chaining it, and the file's share of the writes (every
// SyncEvery steps) and of the periodic sync, on a file journal of
// 13-disk Hanoi records, keyed and not. The records are few, so that
// they stay in the CPU's caches as a step's just-decided record does. cpu-ns/op is the process's CPU
// (user + system, the background fsync included) per step: unlike
// ns/op, the machine's other load does not count in it.
// MDAP_BENCH_EVERY sets SyncEvery (default journal.DefaultSyncEvery).
func BenchmarkJournalStep(b *testing.B) {
	const perFile = 8192 // steps, about a 13-disk run
	for _, c := range []struct {
		name string
		key  []byte
	}{{"sha256", nil}, {"hmac", []byte("0123456789abcdef0123456789abcdef")}} {
		b.Run(c.name, func(b *testing.B) {
			opts := []journal.Option{journal.Unsigned()}
			if c.key != nil {
				b.Setenv(journal.KeyEnv, string(c.key))
				opts = nil
			}
			recs := hanoiRecords(64)
			dir := b.TempDir()
			var j *journal.Journal
			open := func() {
				path := filepath.Join(dir, "j.jsonl")
				_ = os.Remove(path)
				f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				if j, err = journal.New(&fileStore{f: f, w: bufio.NewWriterSize(f, 1<<16), path: path}, opts...); err != nil {
					b.Fatal(err)
				}
				if e := os.Getenv("MDAP_BENCH_EVERY"); e != "" {
					j.SyncEvery, _ = strconv.Atoi(e)
				}
				if err := j.Begin(journal.Run{Fingerprint: "hanoi:N=13", Settings: json.RawMessage(`{"k":3}`)}); err != nil {
					b.Fatal(err)
				}
			}
			open()
			var cpu time.Duration
			i := 0
			c0 := processCPU()
			for b.Loop() {
				rec := &recs[i%len(recs)]
				rec.Step = i
				if err := j.Step(rec); err != nil {
					b.Fatal(err)
				}
				if i++; i == perFile { // a new file, as a new run
					i = 0
					cpu += processCPU() - c0
					if err := j.Close(); err != nil {
						b.Fatal(err)
					}
					open()
					c0 = processCPU()
				}
			}
			cpu += processCPU() - c0
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			j.Close()
		})
	}
}

// BenchmarkJournalWriteSize measures what the kernel charges for writing
// a journal's batches to a new file: 16 MiB written in batches of 64,
// 256 and 1024 lines of 453 bytes (13-disk Hanoi step lines), then
// synced, as a run's file grows. cpu-ns/KB is the process's CPU (user +
// system) per KB written, sync included: the cost is per byte, and less
// per byte for larger writes (the page cache's folios grow with the
// write), not per call.
func BenchmarkJournalWriteSize(b *testing.B) {
	const line, total = 453, 16 << 20
	for _, lines := range []int{64, journal.DefaultSyncEvery, 1024} {
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) {
			batch := make([]byte, lines*line)
			for i := range batch {
				batch[i] = 'a' + byte(i%26)
			}
			dir := b.TempDir()
			var cpu time.Duration
			written := 0
			for i := 0; b.Loop(); i++ {
				path := filepath.Join(dir, strconv.Itoa(i))
				f, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				c0 := processCPU()
				for n := 0; n < total; n += len(batch) {
					if _, err := f.Write(batch); err != nil {
						b.Fatal(err)
					}
					written += len(batch)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				cpu += processCPU() - c0
				f.Close()
				os.Remove(path)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(written>>10), "cpu-ns/KB")
		})
	}
}

// processCPU returns the process's CPU time, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
