package vote

import "time"

// Usage is what samples cost: tokens in and out, and the time spent drawing
// them. Totals add latencies: with samples in parallel, Latency exceeds the
// wall time. It is the one usage type of the project: maker's reports and
// journals carry it as JSON.
type Usage struct {
	InputTokens  int           `json:"input_tokens"`
	OutputTokens int           `json:"output_tokens"`
	Latency      time.Duration `json:"latency_ns"`
	// CachedInputTokens and CacheWriteTokens are the parts of InputTokens
	// the provider read from its prompt cache and wrote to it (billed at
	// their own prices; see maker.Price). Zero when it reports none.
	CachedInputTokens int `json:"cached_input_tokens,omitempty"`
	CacheWriteTokens  int `json:"cache_write_tokens,omitempty"`
	// Requests counts the provider requests the samples took: with
	// several samples per request, the request's first sample carries 1
	// and the others 0. Zero where the drawer does not count them.
	Requests int `json:"requests,omitempty"`
}

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.Latency += v.Latency
	u.CachedInputTokens += v.CachedInputTokens
	u.CacheWriteTokens += v.CacheWriteTokens
	u.Requests += v.Requests
}

// Counts are sample counts, for one race or summed over many (a run's
// steps). For one race, Launched = Valid + Flagged + Errors + Cancelled,
// and a sum of such counts keeps that identity.
type Counts struct {
	// Launched is the number of draws started.
	Launched int `json:"launched"`
	// Valid, Flagged and Errors count the committed samples that voted,
	// that were red-flagged, and whose draw failed.
	Valid   int `json:"valid"`
	Flagged int `json:"flagged"`
	Errors  int `json:"errors"`
	// Cancelled counts draws started but never committed: those still in
	// flight, or past the deciding index, when the race ended.
	Cancelled int `json:"cancelled"`
}

// Add adds o to c, field by field.
func (c *Counts) Add(o Counts) {
	c.Launched += o.Launched
	c.Valid += o.Valid
	c.Flagged += o.Flagged
	c.Errors += o.Errors
	c.Cancelled += o.Cancelled
}

// Tally is what a race counted. Race returns it in Result, and in
// UndecidedError when there is no winner.
//
// Valid, Flagged, Errors, Votes and Flags count the committed samples only:
// indices 0..d, where d is the sample that decided or ended the race (see
// Race). Usage counts every sample drawn, committed or not.
type Tally struct {
	// Votes is the number of valid votes per key. Non-nil unless Race
	// refused its Config or Drawer (ErrConfig before any draw).
	Votes map[uint64]int `json:"votes"`
	// Flags counts red-flagged samples by Flag.Error(). Nil if none.
	Flags map[string]int `json:"flags,omitempty"`
	// Counts: Launched = Valid + Flagged + Errors + Cancelled.
	Counts
	// Usage is the total over every draw started, Cancelled ones included.
	Usage Usage `json:"usage"`
	// Classes, in a race with a Choose (RaceChoosing), maps the Key of each committed valid sample that
	// joined a class of another key to that class's key, so that each
	// sample's class can be shown; a key not in it is its own class's.
	// Nil when no sample joined another key's class (always, with exact
	// matching). Not in the JSON.
	Classes map[uint64]uint64 `json:"-"`
	// Rounds counts the waves: the times the race launched one or more
	// samples. With Parallel = 1 it equals Launched.
	Rounds int `json:"rounds"`
	// Wall is the time Race took.
	Wall time.Duration `json:"wall_ns"`
}

// Result is a race's outcome: the winner and the tally.
type Result[T any] struct {
	// Winner is the Value of the first (lowest-index) sample that voted
	// for the winning key. Zero when Race returns an error.
	Winner T
	// Key is the winning key. Zero when Race returns an error.
	Key uint64
	Tally
}

// UndecidedError is the error of a race that ended without a winner. Cause
// says why: ErrUndecided (budget spent), ErrTooManyErrors, the context's
// error, or ErrConfig (a valid sample with Key 0). errors.Is sees Cause and
// Err.
type UndecidedError struct {
	// Cause is ErrUndecided, ErrTooManyErrors, context.Canceled,
	// context.DeadlineExceeded or ErrConfig.
	Cause error
	// Err is the last failed draw's error with ErrTooManyErrors, the
	// context's cause (context.Cause) if it differs from Cause, what was
	// wrong with ErrConfig (it names the sample's index), else nil.
	Err error
	// Tally is the race's tally when it ended.
	Tally Tally
	msg   string
}

// Error says why the race ended and what it counted.
func (e *UndecidedError) Error() string {
	if e.msg == "" {
		return "vote: no winner: " + e.Cause.Error()
	}
	return e.msg
}

// Unwrap returns Cause and, if set, Err.
func (e *UndecidedError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Cause}
	}
	return []error{e.Cause, e.Err}
}
