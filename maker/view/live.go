package view

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

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
	// race is the samples of the step being decided, raceStep's, in the
	// order they came back; raceMore those past MaxRaceSamples.
	race     []Sample
	raceStep int
	raceMore int
}

// MaxRaceSamples is the most samples of one step a Live keeps for its
// race; a step's record counts those past it in more_samples.
const MaxRaceSamples = 64

// Sample is one sample of a step's race as a Live saw it come back. It
// holds no text of the reply and no provider error message: only its
// class.
type Sample struct {
	// Index is the sample's number in the step's race, from 0 (the order
	// it was launched); the samples are listed in the order they came back.
	Index int `json:"index"`
	// Model is the identity of the model that drew it; Worker the
	// engine's worker identity that did, when the model is remote.
	Model  string `json:"model"`
	Worker string `json:"worker,omitempty"`
	// Class is the answer's vote key (hex, as the record's votes) when
	// the sample voted, "red flag" when it was red-flagged (Flag says
	// why) and "error" when the provider call failed.
	Class string `json:"class"`
	Flag  string `json:"flag,omitempty"`
	// Winner marks a vote for the step's winning answer.
	Winner       bool          `json:"winner,omitempty"`
	InputTokens  int           `json:"input_tokens"`
	OutputTokens int           `json:"output_tokens"`
	Latency      time.Duration `json:"latency_ns"`
}

// Sample classes besides a vote key.
const (
	ClassFlagged = "red flag"
	ClassError   = "error"
)

// raceRecord is a step's record as a Live answers it: the journal's
// record and the race's samples.
type raceRecord struct {
	*maker.StepRecord
	Samples     []Sample `json:"samples"`
	MoreSamples int      `json:"more_samples,omitempty"`
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
			info.Target = kAutoTarget(rec.JSON)
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
	l := &Live{run: NewRun(info), last: -1, raceStep: -1}
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
		l.sample(e)
		l.run.sample(e)
	}
	cost := s.CostOf
	l.cost = func(rep *maker.Report) float64 { return cost(rep) }
	return l
}

// Run is the aggregate of the steps so far.
func (l *Live) Run() *Run { return l.run }

// sample keeps a sample of the step being decided, for its race.
func (l *Live) sample(e maker.SampleEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.Step <= l.last {
		return // a late sample of a decided step
	}
	if e.Step != l.raceStep {
		l.race, l.raceStep, l.raceMore = l.race[:0], e.Step, 0
	}
	if len(l.race) >= MaxRaceSamples {
		l.raceMore++
		return
	}
	s := Sample{Index: e.Index, Model: e.Model, Worker: e.Worker, InputTokens: e.Usage.InputTokens,
		OutputTokens: e.Usage.OutputTokens, Latency: e.Usage.Latency}
	switch {
	case e.Err != nil:
		s.Class = ClassError
	case e.Flag != nil:
		s.Class = ClassFlagged
		s.Flag = e.Flag.Error()
		if e.Reason != nil {
			s.Flag = e.Reason.Error()
		}
	default:
		s.Class = strconv.FormatUint(e.Key, 16)
	}
	l.race = append(l.race, s)
}

func (l *Live) step(e maker.Event) {
	l.mu.Lock()
	rr := raceRecord{StepRecord: e.Record}
	var lost []string
	if l.raceStep == e.Step && !e.Replayed {
		rr.Samples, rr.MoreSamples = l.race, l.raceMore
		for i := range rr.Samples {
			s := &rr.Samples[i]
			switch {
			case s.Class == e.Record.Key:
				s.Winner = true
			case s.Class != ClassError && s.Class != ClassFlagged:
				lost = append(lost, s.Worker)
			}
		}
	}
	b, err := json.Marshal(rr)
	if err != nil {
		b = nil
	}
	if l.raceStep == e.Step {
		l.race, l.raceStep, l.raceMore = l.race[:0], -1, 0
	}
	l.ring[e.Step%RecentRecords] = b
	l.last = max(l.last, e.Step)
	l.mu.Unlock()
	l.run.Add(e.Record)
	l.run.workersLost(lost)
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
