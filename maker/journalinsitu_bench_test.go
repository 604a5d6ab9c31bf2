package maker_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/vote"
)

// interleavedDiag runs one 13-disk solve per set-up, taking turns of 64
// steps in round robin, as benchmarks.interleavedJournal does with two;
// it returns the CPU of each one's turns.
func interleavedDiag(disks int, setups []func(*maker.Solver) error) ([]time.Duration, error) {
	cfg := sim.DefaultConfig()
	cfg.Seed = 1
	const turn = 64
	n := len(setups)
	var (
		cpu      = make([]time.Duration, n)
		batons   = make([]chan struct{}, n)
		finished = make([]bool, n)
		errs     = make([]error, n)
		cpu0     time.Duration
		done     = make(chan struct{}, n)
	)
	for i := range batons {
		batons[i] = make(chan struct{})
	}
	// next returns the next unfinished solve after i, or -1.
	next := func(i int) int {
		for d := 1; d < n; d++ {
			if j := (i + d) % n; !finished[j] {
				return j
			}
		}
		return -1
	}
	account := func(i int) { cpu[i] += cpuNow() - cpu0 }
	resume := func() { cpu0 = cpuNow() }
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			<-batons[i]
			resume()
			errs[i] = func() error {
				m, err := sim.New(hanoi.Oracle{}, cfg)
				if err != nil {
					return err
				}
				task, _ := hanoi.New(disks)
				s := &maker.Solver{Config: maker.Config{Vote: vote.Config{K: 3}}, Model: m}
				s.Progress = func(e maker.Event) {
					if e.Step%turn == turn-1 {
						if j := next(i); j >= 0 {
							account(i)
							batons[j] <- struct{}{}
							<-batons[i]
							resume()
						}
					}
				}
				if err := setups[i](s); err != nil {
					return err
				}
				_, err = s.Solve(context.Background(), task)
				if s.Journal != nil {
					err = errors.Join(err, s.Journal.Close())
				}
				return err
			}()
			account(i)
			finished[i] = true
			if j := next(i); j >= 0 {
				batons[j] <- struct{}{}
			}
		}()
	}
	runtime.GC()
	batons[0] <- struct{}{}
	for range n {
		<-done
	}
	return cpu, errors.Join(errs...)
}

// BenchmarkJournalInSitu splits what a journal costs inside a running
// solve: 13-disk solves on the sim, one plain and one per part named in
// MDAP_DIAG (comma-separated), take turns of 64 steps in one process, each
// turn's process CPU charged to its solve, and each part reports the
// median, first and third quartile over the runs of its CPU over the
// plain solve's. Parts: none (a second plain solve: the method's noise),
// enc (the step's line encoded in a Progress hook, nothing else), encchain
// (encoded and chained there), null (a Journal over a store that keeps
// nothing, but copies, as the file's does), discard (the file store
// writing its buffer to io.Discard: everything but the write(2)s), file
// (CreateJournal), file2 (another), nosync (the file store without
// fsyncs), file16k (a 16 KiB buffer written every 32 steps), file1k (a
// 1 MiB buffer written every 1,024 steps). A part's share is its ratio
// less the one of the part below it, e.g. file less discard is the
// write(2)s. In isolation a step's journal costs far less (see
// BenchmarkJournalStep): here its code and data are cold, the step loop's
// warm.
func BenchmarkJournalInSitu(b *testing.B) {
	dir := b.TempDir()
	var buf []byte
	hook := func(s *maker.Solver, f func(maker.Event)) {
		p := s.Progress
		s.Progress = func(e maker.Event) { f(e); p(e) }
	}
	setups := map[string]func(*maker.Solver) error{
		"none": func(*maker.Solver) error { return nil },
		"file": func(s *maker.Solver) (err error) {
			path := filepath.Join(dir, "file.jsonl")
			_ = os.Remove(path)
			s.Journal, err = journalfile.Create(path)
			return
		},
		"file2": func(s *maker.Solver) (err error) {
			path := filepath.Join(dir, "file2.jsonl")
			_ = os.Remove(path)
			s.Journal, err = journalfile.Create(path)
			return
		},
		"file16k": func(s *maker.Solver) (err error) {
			path := filepath.Join(dir, "file16k.jsonl")
			_ = os.Remove(path)
			s.Journal, err = diagJournal(path, 16<<10, true, false)
			if err == nil {
				s.Journal.SyncEvery = 32
			}
			return
		},
		"nosync": func(s *maker.Solver) (err error) {
			path := filepath.Join(dir, "nosync.jsonl")
			_ = os.Remove(path)
			s.Journal, err = diagJournal(path, 256<<10, false, false)
			return
		},
		"discard": func(s *maker.Solver) (err error) {
			path := filepath.Join(dir, "discard.jsonl")
			_ = os.Remove(path)
			s.Journal, err = diagJournal(path, 256<<10, true, true)
			return
		},
		"file1k": func(s *maker.Solver) (err error) {
			path := filepath.Join(dir, "file1k.jsonl")
			_ = os.Remove(path)
			s.Journal, err = diagJournal(path, 1<<20, true, false)
			if err == nil {
				s.Journal.SyncEvery = 1024
			}
			return
		},
		"null": func(s *maker.Solver) (err error) {
			s.Journal, err = journal.New(diagNull{}, journal.Unsigned())
			return
		},
		"enc": func(s *maker.Solver) error {
			hook(s, func(e maker.Event) { buf, _ = json.Marshal(e.Record) })
			return nil
		},
		"encchain": func(s *maker.Solver) error {
			ch := new(diagChain)
			hook(s, func(e maker.Event) { buf, _ = json.Marshal(e.Record); buf = ch.Seal(buf) })
			return nil
		},
	}
	names := append([]string{"none"}, strings.Split(os.Getenv("MDAP_DIAG"), ",")...)
	var run []func(*maker.Solver) error
	for _, n := range names {
		run = append(run, setups[n])
	}
	ratios := make([][]float64, len(names))
	for b.Loop() {
		cpu, err := interleavedDiag(13, run)
		if err != nil {
			b.Fatal(err)
		}
		for i := range names {
			ratios[i] = append(ratios[i], float64(cpu[i])/float64(cpu[0]))
		}
	}
	for i, n := range names[1:] {
		r := slices.Clone(ratios[i+1])
		slices.Sort(r)
		b.ReportMetric(r[len(r)/2], n+"-ratio")
		b.ReportMetric(r[len(r)/4], n+"-q1")
		b.ReportMetric(r[len(r)*3/4], n+"-q3")
	}
}

// Stand-ins for the journal's own file store and chain, to split the
// journal's cost into its parts from outside package journal.

// diagStore is a file store without the torn-tail handling: a new file's
// lines go through a buffer of its size to the file (or io.Discard), and
// are synced to disk when sync is set.
type diagStore struct {
	f    *os.File
	w    *bufio.Writer
	sync bool
}

// diagJournal is journal.Create, unsigned, over a diagStore.
func diagJournal(path string, size int, sync, discard bool) (*journal.Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	var to io.Writer = f
	if discard {
		to = io.Discard
	}
	return journal.New(&diagStore{f: f, w: bufio.NewWriterSize(to, size), sync: sync}, journal.Unsigned())
}

func (s *diagStore) Name() string                             { return s.f.Name() }
func (s *diagStore) Lines(int, func(int, []byte) error) error { return nil }
func (s *diagStore) Torn() []byte                             { return nil }
func (s *diagStore) Append(line []byte) error {
	_, _ = s.w.Write(line)
	return s.w.WriteByte('\n')
}
func (s *diagStore) Flush() error { return s.w.Flush() }
func (s *diagStore) Sync() error {
	if err := s.w.Flush(); err != nil || !s.sync {
		return err
	}
	return s.f.Sync()
}
func (s *diagStore) Reset() error { return s.f.Truncate(0) }
func (s *diagStore) Close() error { return errors.Join(s.w.Flush(), s.f.Close()) }

// diagNull is a store that keeps nothing: encoding and chaining without
// I/O.
type diagNull struct{}

func (diagNull) Name() string                             { return "null" }
func (diagNull) Lines(int, func(int, []byte) error) error { return nil }
func (diagNull) Torn() []byte                             { return nil }
func (diagNull) Append([]byte) error                      { return nil }
func (diagNull) Flush() error                             { return nil }
func (diagNull) Sync() error                              { return nil }
func (diagNull) Reset() error                             { return nil }
func (diagNull) Close() error                             { return nil }

// diagChain is an unkeyed hash chain as the journal's: each line's
// SHA-256 over the previous one's and the line's bytes, appended in hex.
type diagChain struct{ prev [sha256.Size]byte }

func (c *diagChain) Seal(line []byte) []byte {
	body := line[:len(line)-1]
	c.prev = sha256.Sum256(append(c.prev[:], body...))
	out := append(body, `,"chain":"`...)
	out = hex.AppendEncode(out, c.prev[:])
	return append(out, '"', '}')
}
