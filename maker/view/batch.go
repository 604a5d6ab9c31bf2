package view

import (
	"sync"
	"time"
)

// Task statuses of a batch, as the page shows them. Solved, failed and
// invalid are the batch's results (a results line, or the runner in
// process); the others say where a task without a result is.
const (
	StatusQueued  = "queued"  // not started yet (in process)
	StatusRunning = "running" // being solved (in process)
	StatusSolved  = "solved"
	StatusFailed  = "failed"
	StatusInvalid = "invalid"
	// StatusStopped: the task was stopped without a result (in process:
	// a fault, or the batch interrupted); it resumes from its journal.
	StatusStopped = "stopped"
	// StatusUnfinished: a state folder's journal with no result known,
	// whose task's steps are not all decided: running, or stopped.
	StatusUnfinished = "unfinished"
	// StatusDecided: a state folder's journal with no result known, every
	// step of whose task is decided.
	StatusDecided = "decided"
)

// BatchTask is one task of a batch as the page lists it.
type BatchTask struct {
	// Name is the task's name in the view's addresses (/?task=NAME):
	// its journal's file name in a state folder, its id in process.
	Name string `json:"name"`
	// ID is the task's id; Kind its kind (hanoi, multiply, spec...) when
	// known; Line its line in the tasks file (0: unknown).
	ID   string `json:"id"`
	Kind string `json:"kind,omitempty"`
	Line int    `json:"line,omitempty"`
	// Status is one of the Status constants.
	Status string `json:"status"`
	// Steps are its decided steps (a decomposition's decisions), Total
	// the steps its task takes when known (else 0), Samples its samples,
	// Cost its dollars (a result's, or its run's last known).
	Steps   int     `json:"steps"`
	Total   int     `json:"total,omitempty"`
	Samples int     `json:"samples"`
	Cost    float64 `json:"cost"`
	// Error is a result's error, or why the view cannot follow its
	// journal.
	Error string `json:"error,omitempty"`
	// Openable: the task's run has a page of its own (its step map and
	// records): a step loop's, not a decomposition's.
	Openable bool `json:"openable"`
}

// BatchStats is a batch as the page shows it.
type BatchStats struct {
	// Source names the batch: a state folder, or a tasks file in process.
	Source string `json:"source"`
	// Tasks counts every task; ByStatus counts them by status.
	Tasks    int            `json:"tasks"`
	ByStatus map[string]int `json:"by_status"`
	// Steps, Samples and Cost sum the tasks'.
	Steps   int     `json:"steps"`
	Samples int     `json:"samples"`
	Cost    float64 `json:"cost"`
	// CostCap is the batch's --max-cost, 0 for none.
	CostCap float64 `json:"cost_cap,omitempty"`
	// List is the tasks in order, at most MaxBatchRows of them (running
	// ones first); Listed says how many that is.
	List   []BatchTask `json:"list"`
	Listed int         `json:"listed"`
	// Err says why the view stopped following the batch, if it did.
	Err string `json:"error,omitempty"`
}

// MaxBatchRows is the most tasks a BatchStats lists; it counts them all.
const MaxBatchRows = 2000

// Batch is a batch's tasks, each with its own Run when it has a step loop.
// Safe for concurrent use. Memory: a BatchTask per task and each task's
// Run (a byte per decided step).
type Batch struct {
	mu      sync.Mutex
	source  string
	costCap float64
	order   []*batchEntry
	byName  map[string]*batchEntry
	err     string
	changed chan struct{}
}

type batchEntry struct {
	t       BatchTask
	run     *Run
	records Records
}

// NewBatch returns an empty batch named source, with a cap of costCap
// dollars (0: none).
func NewBatch(source string, costCap float64) *Batch {
	return &Batch{source: source, costCap: max(costCap, 0), byName: map[string]*batchEntry{}, changed: make(chan struct{})}
}

func (b *Batch) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change of a task's status
// (a task's steps change its Run, not the batch).
func (b *Batch) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

// Put adds task t, or replaces the task of that name (keeping its place),
// with its Run and Records (nil for none: then it is not Openable).
func (b *Batch) Put(t BatchTask, run *Run, records Records) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t.Openable = run != nil
	e := b.byName[t.Name]
	if e == nil {
		e = &batchEntry{}
		b.byName[t.Name] = e
		b.order = append(b.order, e)
	}
	e.t, e.run, e.records = t, run, records
	b.notifyLocked()
}

// Update changes the task named name with fn; it reports whether there
// is one.
func (b *Batch) Update(name string, fn func(*BatchTask)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.byName[name]
	if e == nil {
		return false
	}
	fn(&e.t)
	e.t.Openable = e.run != nil
	b.notifyLocked()
	return true
}

// Task returns the Run and Records of the task named name.
func (b *Batch) Task(name string) (*Run, Records, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.byName[name]
	if e == nil || e.run == nil {
		return nil, nil, false
	}
	return e.run, e.records, true
}

// SetErr records why the view stopped following the batch.
func (b *Batch) SetErr(err error) {
	b.mu.Lock()
	b.err = err.Error()
	b.notifyLocked()
	b.mu.Unlock()
}

// Stats returns the batch now: a task with a Run and no result takes its
// steps, samples and cost from the Run.
func (b *Batch) Stats() BatchStats {
	b.mu.Lock()
	entries := append([]*batchEntry(nil), b.order...)
	tasks := make([]BatchTask, len(entries))
	for i, e := range entries {
		tasks[i] = e.t
	}
	st := BatchStats{Source: b.source, CostCap: b.costCap, Err: b.err, Tasks: len(entries), ByStatus: map[string]int{}}
	b.mu.Unlock()
	running := 0
	for i, e := range entries {
		t := &tasks[i]
		if e.run != nil && !finalStatus(t.Status) {
			steps, total, samples, cost := e.run.progress()
			t.Steps, t.Total, t.Samples = steps, total, samples
			if cost >= 0 {
				t.Cost = cost
			}
			if t.Status == StatusUnfinished && total > 0 && steps >= total {
				t.Status = StatusDecided
			}
		}
		st.ByStatus[t.Status]++
		st.Steps += t.Steps
		st.Samples += t.Samples
		st.Cost += t.Cost
		if t.Status == StatusRunning {
			running++
		}
	}
	// The list: running tasks first, then the others in order.
	st.List = make([]BatchTask, 0, min(len(tasks), MaxBatchRows))
	for pass := 0; pass < 2; pass++ {
		for _, t := range tasks {
			if len(st.List) == MaxBatchRows {
				break
			}
			if (t.Status == StatusRunning) == (pass == 0) {
				st.List = append(st.List, t)
			}
		}
	}
	st.Listed = len(st.List)
	return st
}

// finalStatus: a result was recorded.
func finalStatus(s string) bool {
	return s == StatusSolved || s == StatusFailed || s == StatusInvalid
}

// progress is a Run's steps, total, samples and cost (-1: unknown),
// without the rest of Stats.
func (r *Run) progress() (steps, total, samples int, cost float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cost = -1
	if r.s.CostStep >= 0 {
		cost = r.s.Cost
	}
	return r.s.Steps, r.info.Total, r.s.Valid + r.s.Flagged + r.s.Errors, cost
}

// batchPoll is how often a batch's event stream looks at its tasks' Runs
// when no status changed.
const batchPoll = time.Second
