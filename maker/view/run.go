package view

import (
	"strconv"
	"sync"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
)

// Info is what a run says of itself before its steps: its journal's
// header, or the Solver's settings in process.
type Info struct {
	// Source names where the steps come from: a journal's path, or
	// "in process".
	Source string `json:"source"`
	// Task is the task's fingerprint ("hanoi:N=20"), Run the journal's
	// run id, Mdap the version of mdap that began it.
	Task string `json:"task"`
	Run  string `json:"run,omitempty"`
	Mdap string `json:"mdap,omitempty"`
	// Model is the model's identity as the journal records it (no
	// secret: identities never hold keys or URL user info).
	Model string `json:"model"`
	// K is the fixed margin; 0 when each step's k is chosen (adaptive).
	K int `json:"k"`
	// Total is the number of steps the task takes when it is known in
	// advance (Hanoi: 2^N-1), else 0.
	Total int `json:"total"`
	// Signed reports a journal chained with a key. The view does not
	// check the chain: it only shows what the file holds.
	Signed bool `json:"signed"`
	// Target is the run's target success probability T, 0 when it has
	// none (a journal records it under --k auto).
	Target float64 `json:"target,omitempty"`
	// CostCap is the run's spending cap in dollars (--max-cost), 0 for
	// none. A journal does not record it.
	CostCap float64 `json:"cost_cap,omitempty"`
	// Remote names the route the samples are drawn through (--nats), ""
	// when the model is called in process.
	Remote string `json:"remote,omitempty"`
}

// Cell bits: a step's byte in the map. The low five bits are the samples
// the step took (valid, flagged and failed), at most CellSamples; 0 is a
// step not decided yet.
const (
	CellSamples   = 0x1f
	CellFlagged   = 0x20 // a sample was red-flagged
	CellContested = 0x40 // its first race ran past the escalation threshold
	CellEscalated = 0x80 // decided by the escalation policy
)

// Cell returns a decided step's byte in the map.
func Cell(rec *journal.StepRecord) byte {
	n := min(rec.Valid+rec.Flagged+rec.Errors, CellSamples)
	c := byte(max(n, 1))
	if rec.Flagged > 0 {
		c |= CellFlagged
	}
	if rec.Contested {
		c |= CellContested
	}
	if rec.Escalated {
		c |= CellEscalated
	}
	return c
}

// ModelStats is one model's share of the steps seen.
type ModelStats struct {
	Model string `json:"model"`
	vote.Counts
	WinnerVotes int        `json:"winner_votes"`
	Usage       vote.Usage `json:"usage"`
}

// Stats are a run's counters, as the page shows them.
type Stats struct {
	Info
	// Steps are the decided steps seen, Left those the task still takes
	// (-1 when its total is unknown).
	Steps int `json:"steps"`
	Left  int `json:"left"`
	// Pending is a step decided whose side-effect tool call has not
	// returned yet, or -1.
	Pending int `json:"pending"`
	vote.Counts
	// Samples are the valid, flagged and failed samples of the decided
	// steps; SamplesPerStep their mean; FlagRate the flagged share of
	// them.
	Samples        int     `json:"samples"`
	SamplesPerStep float64 `json:"samples_per_step"`
	FlagRate       float64 `json:"flag_rate"`
	// MostSamples is the most samples a step took, at step MostStep.
	MostSamples int            `json:"most_samples"`
	MostStep    int            `json:"most_step"`
	Flags       map[string]int `json:"flags"`
	Contested   int            `json:"contested"`
	Escalated   int            `json:"escalated"`
	Checked     int            `json:"checked"`
	Usage       vote.Usage     `json:"usage"`
	// Cost is the dollars the run had spent at its last checkpoint (the
	// journal's steps record tokens, not prices) or, in process, now;
	// CostStep the steps it covers (-1: no cost known).
	Cost     float64 `json:"cost"`
	CostStep int     `json:"cost_step"`
	// StepTime is the summed time of the decided steps; ETA the time the
	// steps left would take at the mean step time (-1: unknown).
	StepTime time.Duration `json:"step_time_ns"`
	ETA      time.Duration `json:"eta_ns"`
	Models   []ModelStats  `json:"models"`
	// Done: every step the task takes is decided.
	Done bool `json:"done"`
	// Current is the step being decided, in process only.
	Current *Current `json:"current,omitempty"`
	// Budget is the failure budget the decided steps spent (see Budget).
	Budget Budget `json:"budget"`
	// Workers are the workers that drew the samples, when the model is
	// remote (in process only: a journal does not name them).
	Workers []WorkerStats `json:"workers,omitempty"`
	// Width and Height are the step map's size in cells.
	Width  int `json:"width"`
	Height int `json:"height"`
	// Err says why the view stopped following its journal, if it did.
	Err string `json:"error,omitempty"`
}

// Current is the step being decided, as its samples complete.
type Current struct {
	Step    int `json:"step"`
	Valid   int `json:"valid"`
	Flagged int `json:"flagged"`
	Errors  int `json:"errors"`
}

// Run aggregates a run's steps as they come. It is safe for concurrent
// use: one feeder (Follow or Attach) adds steps, any number of readers
// take Stats and cells. Memory: one byte per step and a few counters.
type Run struct {
	mu      sync.Mutex
	info    Info
	cells   []byte
	s       Stats
	changed chan struct{} // closed and replaced on every change
	budget  budgetCounts
	workers workerBook
}

// NewRun returns an empty Run of the run info describes.
func NewRun(info Info) *Run {
	r := &Run{changed: make(chan struct{})}
	r.setInfoLocked(info)
	r.s.Pending, r.s.CostStep, r.s.MostStep = -1, -1, -1
	r.s.Flags = map[string]int{}
	return r
}

func (r *Run) setInfoLocked(info Info) {
	r.info = info
	if info.Total > 0 && cap(r.cells) < info.Total {
		c := make([]byte, len(r.cells), info.Total)
		copy(c, r.cells)
		r.cells = c
	}
}

// SetInfo replaces the run's description (a journal's header read after
// the view began).
func (r *Run) SetInfo(info Info) {
	r.mu.Lock()
	r.setInfoLocked(info)
	r.notifyLocked()
	r.mu.Unlock()
}

// mergeInfo replaces the run's description by info, keeping the target,
// cap and route already set where info has none (a journal's header does
// not record the cap; SetLimits set it).
func (r *Run) mergeInfo(info Info) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if info.Target == 0 {
		info.Target = r.info.Target
	}
	if info.CostCap == 0 {
		info.CostCap = r.info.CostCap
	}
	if info.Remote == "" {
		info.Remote = r.info.Remote
	}
	r.setInfoLocked(info)
	r.notifyLocked()
}

// SetLimits sets the run's target success probability T and its
// spending cap in dollars (0: none), which a journal may not record:
// the page shows the failure budget against T and the cost against the
// cap. A T outside (0, 1) or a negative cap is taken as none.
func (r *Run) SetLimits(target, costCap float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if target > 0 && target < 1 {
		r.info.Target = target
	}
	if costCap > 0 {
		r.info.CostCap = costCap
	}
	r.notifyLocked()
}

// notifyLocked wakes every waiter of Changed.
func (r *Run) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change.
func (r *Run) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// Add aggregates a decided step. Steps come in order; a step already seen
// (a record repeated) is ignored. rec is not kept.
func (r *Run) Add(rec *journal.StepRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec.Step < len(r.cells) || rec.Step < 0 {
		return
	}
	for len(r.cells) < rec.Step { // a gap: never in a sound journal
		r.cells = append(r.cells, 0)
	}
	r.cells = append(r.cells, Cell(rec))
	s := &r.s
	s.Steps++
	s.Counts.Add(rec.Counts)
	n := rec.Valid + rec.Flagged + rec.Errors
	if n > s.MostSamples {
		s.MostSamples, s.MostStep = n, rec.Step
	}
	for f, c := range rec.Flags {
		s.Flags[f] += c
	}
	if rec.Contested {
		s.Contested++
	}
	if rec.Escalated {
		s.Escalated++
	}
	if rec.Checked {
		s.Checked++
	}
	r.budget.add(rec.K, rec.Valid, rec.Votes[rec.Key])
	s.Usage.Add(rec.Usage)
	s.StepTime += rec.Elapsed
	if s.Pending == rec.Step {
		s.Pending = -1
	}
	if s.Current != nil && s.Current.Step <= rec.Step {
		s.Current = nil
	}
	if len(rec.Models) == 0 {
		if len(s.Models) == 0 {
			s.Models = []ModelStats{{Model: r.info.Model}}
		}
		m := &s.Models[0]
		m.Counts.Add(rec.Counts)
		m.Usage.Add(rec.Usage)
		m.WinnerVotes += rec.Votes[rec.Key]
	}
	for i, ms := range rec.Models {
		for len(s.Models) <= i {
			s.Models = append(s.Models, ModelStats{Model: memberName(r.info.Model, len(s.Models))})
		}
		m := &s.Models[i]
		m.Counts.Add(ms.Counts)
		m.Usage.Add(ms.Usage)
		m.WinnerVotes += ms.WinnerVotes
	}
	r.notifyLocked()
}

// memberName names an ensemble's member i: the journal records the
// ensemble's identity, not each member's apart.
func memberName(ensemble string, i int) string {
	return "member " + strconv.Itoa(i+1) + " of " + ensemble
}

// SetPending marks step as decided with its side-effect call running.
func (r *Run) SetPending(step int) {
	r.mu.Lock()
	r.s.Pending = step
	r.notifyLocked()
	r.mu.Unlock()
}

// SetCost records the dollars spent by the first steps steps.
func (r *Run) SetCost(cost float64, steps int) {
	r.mu.Lock()
	r.s.Cost, r.s.CostStep = cost, steps
	r.notifyLocked()
	r.mu.Unlock()
}

// SetErr records why the view stopped following its source.
func (r *Run) SetErr(err error) {
	r.mu.Lock()
	r.s.Err = err.Error()
	r.notifyLocked()
	r.mu.Unlock()
}

// sample counts a sample of the step being decided (in process).
func (r *Run) sample(e maker.SampleEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.workers.sample(e, time.Now())
	if e.Step < len(r.cells) {
		r.notifyLocked()
		return // a late sample of a decided step
	}
	c := r.s.Current
	if c == nil || c.Step != e.Step {
		c = &Current{Step: e.Step}
		r.s.Current = c
	}
	switch {
	case e.Err != nil:
		c.Errors++
	case e.Flag != nil:
		c.Flagged++
	default:
		c.Valid++
	}
	r.notifyLocked()
}

// workersLost counts a decided step's valid votes that lost, by the
// workers that drew them.
func (r *Run) workersLost(workers []string) {
	if len(workers) == 0 {
		return
	}
	r.mu.Lock()
	for _, w := range workers {
		r.workers.lost(w)
	}
	r.mu.Unlock()
}

// Stats returns the counters now.
func (r *Run) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	s.Info = r.info
	s.Flags = make(map[string]int, len(r.s.Flags))
	for k, v := range r.s.Flags {
		s.Flags[k] = v
	}
	s.Models = append([]ModelStats(nil), r.s.Models...)
	if c := r.s.Current; c != nil {
		cc := *c
		s.Current = &cc
	}
	s.Samples = s.Valid + s.Flagged + s.Errors
	if s.Steps > 0 {
		s.SamplesPerStep = float64(s.Samples) / float64(s.Steps)
	}
	if s.Samples > 0 {
		s.FlagRate = float64(s.Flagged) / float64(s.Samples)
	}
	s.Left, s.ETA = -1, -1
	if s.Total > 0 {
		s.Left = max(s.Total-s.Steps, 0)
		s.Done = s.Left == 0
		if s.Steps > 0 {
			s.ETA = time.Duration(float64(s.StepTime) / float64(s.Steps) * float64(s.Left))
		}
	}
	s.Width, s.Height = Layout(r.mapSteps())
	s.Budget = r.budget.budget(r.info.Target, r.info.Total, r.info.K)
	s.Workers = r.workers.list()
	return s
}

// mapSteps is the number of cells the map lays out: the task's total
// when known, else the steps seen.
func (r *Run) mapSteps() int {
	return max(r.info.Total, len(r.cells))
}

// Cells returns a copy of the map's cells from step from on.
func (r *Run) Cells(from int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if from >= len(r.cells) {
		return nil
	}
	return append([]byte(nil), r.cells[max(from, 0):]...)
}

// Layout is the step map's size for n steps: a square-ish grid whose
// width is a power of two, so that step i is at (i mod width, i / width)
// and 2^20 steps are 1024×1024.
func Layout(n int) (width, height int) {
	if n <= 0 {
		return 1, 1
	}
	w := 1
	for w*w < n {
		w <<= 1
	}
	if w > 1 && (w/2)*(w/2)*2 >= n { // a 2:1 grid when it is enough
		w /= 2
	}
	return w, (n + w - 1) / w
}
