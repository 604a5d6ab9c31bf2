package view

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/vote"
)

// RecentRecords is how many of the last steps' records a Live keeps, for
// a click on their cells; an older step's record is in the run's journal.
const RecentRecords = 1024

// Live feeds a Run in process from a Solver's callbacks, and keeps the
// last RecentRecords step records. It implements Records.
type Live struct {
	run *Run
	mu  sync.Mutex
	// ring[i%RecentRecords] is step i's record as JSON, for the last
	// steps up to last.
	ring [RecentRecords][]byte
	last int
	// cost prices a report at the Solver's prices.
	cost func(*maker.Report) float64
}

// SolverInfo describes the run s makes of task: the model's identity,
// the margin (0 under adaptive k), the task's fingerprint, its total
// steps when known (TotalSteps) and its target T under an adaptive k
// whose record names one.
func SolverInfo(s *maker.Solver, task maker.Task) Info {
	k := s.Vote.K
	if k == 0 {
		k = vote.DefaultK
	}
	if s.AdaptiveK != nil {
		k = 0
	}
	fp := task.Fingerprint()
	info := Info{Source: "in process", Task: fp, Model: maker.ModelIdentity(s.Model), K: k, Total: TotalSteps(fp)}
	if s.AdaptiveK != nil {
		if rec, err := s.AdaptiveK.Record(); err == nil {
			info.Target = kAutoTarget(rec)
		}
	}
	return info
}

// Attach makes a Live fed by s: it wraps s.Progress and s.OnSample (the
// ones set before are still called, first), so call it after the
// callbacks of others are set and before Solve. Each step costs a JSON
// encoding of its record (kept for a click) and a lock; each sample a
// lock.
func Attach(s *maker.Solver, info Info) *Live {
	l := &Live{run: NewRun(info), last: -1}
	progress, sample := s.Progress, s.OnSample
	s.Progress = func(e maker.Event) {
		if progress != nil {
			progress(e)
		}
		l.step(e)
	}
	s.OnSample = func(e maker.SampleEvent) {
		if sample != nil {
			sample(e)
		}
		l.run.sample(e)
	}
	cost := s.CostOf
	l.cost = func(rep *maker.Report) float64 { return cost(rep) }
	return l
}

// Run is the aggregate of the steps so far.
func (l *Live) Run() *Run { return l.run }

func (l *Live) step(e maker.Event) {
	var models []string
	if e.Report != nil {
		for _, m := range e.Report.Models {
			models = append(models, m.Model)
		}
	}
	rr := raceRecord{StepRecord: e.Record}
	rr.Samples, rr.MoreSamples = raceOf(e.Record, models)
	b, err := json.Marshal(rr)
	if err != nil {
		b = nil
	}
	l.mu.Lock()
	l.ring[e.Step%RecentRecords] = b
	l.last = max(l.last, e.Step)
	l.mu.Unlock()
	l.run.Add(e.Record)
	if !e.Replayed {
		l.run.workersLost(lostWorkers(e.Record))
	}
	if l.cost != nil && e.Report != nil {
		l.run.SetCost(l.cost(e.Report), e.Report.Steps)
	}
}

// Record returns one of the last RecentRecords steps' records.
//
// Errors: ErrNoStep for a step not decided yet or decided earlier.
func (l *Live) Record(step int) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if step < 0 || step > l.last {
		return nil, fmt.Errorf("%w: step %d is not decided yet", ErrNoStep, step)
	}
	if step <= l.last-RecentRecords || l.ring[step%RecentRecords] == nil {
		return nil, fmt.Errorf("%w: step %d is older than the last %d steps this view keeps in memory; open the run's journal with maker view", ErrNoStep, step, RecentRecords)
	}
	return l.ring[step%RecentRecords], nil
}

// WithJournal answers a step's record from first (a Live) and, when first
// no longer keeps it, from the run's journal file, read up to its end
// first (the whole file on the first such click, what was appended since
// on the next). The file is only read.
func WithJournal(first Records, file *File) Records {
	return journalFallback{first: first, file: file}
}

type journalFallback struct {
	first Records
	file  *File
}

func (f journalFallback) Record(step int) ([]byte, error) {
	b, err := f.first.Record(step)
	if err == nil || !errors.Is(err, ErrNoStep) {
		return b, err
	}
	if _, rerr := f.file.Read(); rerr != nil {
		return nil, rerr
	}
	if b, ferr := f.file.Record(step); ferr == nil {
		return b, nil
	}
	return nil, err
}

// AttachConfig attaches a Live to s (Attach, with info) and returns its
// view Config: the run, and each step's record from memory or, for a
// step it no longer keeps, from s's journal file when it has one
// (WithJournal; a journal on another store has no file). done releases
// that file; call it once the view is closed.
func AttachConfig(s *maker.Solver, info Info) (cfg Config, done func()) {
	live := Attach(s, info)
	cfg = Config{Run: live.Run(), Records: live}
	if s.Journal != nil {
		if f, err := OpenFile(s.Journal.Path()); err == nil {
			cfg.Records = WithJournal(live, f)
			return cfg, func() { _ = f.Close() }
		}
	}
	return cfg, func() {}
}
