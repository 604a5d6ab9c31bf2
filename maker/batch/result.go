package batch

import (
	"encoding/json"
	"strconv"
)

// Status is how a task ended.
type Status string

// The statuses of a result.
const (
	// StatusSolved: the task finished (for Towers of Hanoi: in the goal
	// state after exactly the right number of legal moves).
	StatusSolved Status = "solved"
	// StatusFailed: the run ended without solving it: an undecided step,
	// a spent budget, the step limit, a task that said it was done in a
	// wrong state.
	StatusFailed Status = "failed"
	// StatusInvalid: the task could not be run as written: a bad line, a
	// spec file that is missing or bad, overrides out of range, a journal
	// left by another version of the line.
	StatusInvalid Status = "invalid"
)

// Result is what became of one job: one JSON line of a results file.
// Everything but WallSeconds is a function of the job, the settings and,
// for the simulated model, its seed: a resumed task reports the same
// figures as an uninterrupted one.
type Result struct {
	// ID is the job's id; empty for a line whose id is missing,
	// unreadable or taken by an earlier line (Line names it then).
	ID string `json:"id"`
	// Line is the job's line in the tasks file.
	Line int `json:"line"`
	// Kind is the job's kind: "spec", "hanoi", "multiply", "sort", "task",
	// or empty.
	Kind   string `json:"kind,omitempty"`
	Status Status `json:"status"`
	// Steps are the decided steps (a decomposition's: its decisions, with
	// Samples their model calls and Valid, Flagged and Errors not
	// counted); Samples the samples launched, of
	// which Valid voted, Flagged were red-flagged (by reason in Flags)
	// and Errors failed at the provider.
	Steps   int            `json:"steps"`
	Samples int            `json:"samples"`
	Valid   int            `json:"valid"`
	Flagged int            `json:"flagged"`
	Errors  int            `json:"errors"`
	Flags   map[string]int `json:"flags,omitempty"`
	// InputTokens, OutputTokens and Cost are what the samples cost.
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	Cost         float64 `json:"cost"`
	// CachedInputTokens and CacheWriteTokens are the input tokens read
	// from and written to the provider's prompt cache, Requests the
	// provider requests (fewer than Samples with several per request).
	CachedInputTokens int `json:"cached_input_tokens,omitempty"`
	CacheWriteTokens  int `json:"cache_write_tokens,omitempty"`
	Requests          int `json:"requests,omitempty"`
	// ToolCalls counts winning tool calls, Denied those the policy refused.
	ToolCalls int `json:"tool_calls,omitempty"`
	Denied    int `json:"denied,omitempty"`
	// K is the margin the task ran with; Model the model's identity.
	K     int    `json:"k,omitempty"`
	Model string `json:"model,omitempty"`
	// WallSeconds is the time the task took in the run that finished it
	// (a resumed task: that run's share only).
	WallSeconds float64 `json:"wall_seconds"`
	// Journal is the task's journal, relative to the results file's
	// folder; empty without a state folder.
	Journal string `json:"journal,omitempty"`
	// Error says why the task failed or is invalid.
	Error string `json:"error,omitempty"`
	// State is the task's final state: a spec task's state; the pegs of
	// Towers of Hanoi.
	State json.RawMessage `json:"state,omitempty"`
	// Answer and Correct are a decomposition's ("multiply", "sort"): the
	// root's answer (the product as a decimal string, the sorted list)
	// and the family's exact check of it.
	Answer  json.RawMessage `json:"answer,omitempty"`
	Correct *bool           `json:"correct,omitempty"`
	// Unprotected counts a decomposition's decisions at co-failed nodes
	// (the simulated model's co-failure share) decided wrong.
	Unprotected int `json:"unprotected,omitempty"`
	// Resumed is the number of steps this run replayed from the task's
	// journal instead of deciding them. It is not written: the line is
	// the same whether the task was resumed or not.
	Resumed int `json:"-"`
}

// Key identifies the result's job as Job.Key does.
func (r Result) Key() string {
	if r.ID != "" {
		return "id:" + r.ID
	}
	return "line:" + strconv.Itoa(r.Line)
}

// Summary is what a batch did, over every job of the file: those run now
// and those whose results were recorded by an earlier run (Skipped).
type Summary struct {
	// Tasks is the number of jobs; Solved, Failed and Invalid count their
	// results; Unfinished counts jobs without a result (an interrupted
	// batch).
	Tasks      int `json:"tasks"`
	Solved     int `json:"solved"`
	Failed     int `json:"failed"`
	Invalid    int `json:"invalid"`
	Unfinished int `json:"unfinished"`
	// Skipped counts jobs with a result recorded before this run.
	Skipped int `json:"skipped"`
	// Totals over the results.
	Steps        int     `json:"steps"`
	Samples      int     `json:"samples"`
	Flagged      int     `json:"flagged"`
	Errors       int     `json:"errors"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	Cost         float64 `json:"cost"`
	// CachedInputTokens, CacheWriteTokens and Requests are the results'
	// sums (see Result).
	CachedInputTokens int `json:"cached_input_tokens"`
	CacheWriteTokens  int `json:"cache_write_tokens"`
	Requests          int `json:"requests"`
	// Spent is what this run's model calls cost, SpentTotal what the
	// batch has spent in every run so far, this one included (see
	// Runner.Budget: both are 0 without one). Unlike Cost, they count
	// the calls of tasks that have no result yet and of steps that were
	// cut off.
	Spent      float64 `json:"spent"`
	SpentTotal float64 `json:"spent_total"`
	// Resumed counts the steps this run replayed from journals, over the
	// tasks it finished.
	Resumed int `json:"resumed"`
	// WallSeconds is this run's time.
	WallSeconds float64 `json:"wall_seconds"`
	// Limits are the shared limits' counters, when there were limits.
	Limits *LimitStats `json:"limits,omitempty"`
	// Results are the jobs' results in job order, unfinished jobs left
	// out.
	Results []Result `json:"-"`
}

// OK reports whether every job was solved.
func (s Summary) OK() bool {
	return s.Unfinished == 0 && s.Failed == 0 && s.Invalid == 0
}

func (s *Summary) add(r Result) {
	switch r.Status {
	case StatusSolved:
		s.Solved++
	case StatusFailed:
		s.Failed++
	default:
		s.Invalid++
	}
	s.Steps += r.Steps
	s.Samples += r.Samples
	s.Flagged += r.Flagged
	s.Errors += r.Errors
	s.InputTokens += r.InputTokens
	s.OutputTokens += r.OutputTokens
	s.Cost += r.Cost
	s.CachedInputTokens += r.CachedInputTokens
	s.CacheWriteTokens += r.CacheWriteTokens
	s.Requests += r.Requests
	s.Resumed += r.Resumed
	s.Results = append(s.Results, r)
}
