package vote

import "time"

// Usage is what samples cost: tokens in and out, and the time spent drawing
// them. Totals add latencies: with samples in parallel, Latency exceeds the
// wall time.
type Usage struct {
	InputTokens  int
	OutputTokens int
	Latency      time.Duration
}

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.Latency += v.Latency
}

// Tally is what a race counted. Race returns it in Result, and in
// UndecidedError when there is no winner.
//
// Valid, Flagged, Errors, Votes and Flags count the committed samples only:
// indices 0..d, where d is the sample that decided or ended the race (see
// Race). Usage counts every sample drawn, committed or not.
type Tally struct {
	// Votes is the number of valid votes per key. Non-nil unless Race
	// failed with ErrConfig.
	Votes map[uint64]int
	// Flags counts red-flagged samples by Flag.Error(). Nil if none.
	Flags map[string]int
	// Launched is the number of draws started.
	Launched int
	// Valid, Flagged and Errors count the committed samples that voted,
	// that were red-flagged, and whose draw failed.
	Valid, Flagged, Errors int
	// Cancelled counts draws started but never committed: those still in
	// flight or past the deciding index when the race ended. Launched =
	// Valid + Flagged + Errors + Cancelled.
	Cancelled int
	// Usage is the total over every draw started, Cancelled ones included.
	Usage Usage
	// Rounds counts the waves: the times the race launched one or more
	// samples. With Parallel = 1 it equals Launched.
	Rounds int
	// Wall is the time Race took.
	Wall time.Duration
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
// says why: ErrUndecided (budget spent), ErrTooManyErrors, or the context's
// error. errors.Is sees Cause and Err.
type UndecidedError struct {
	// Cause is ErrUndecided, ErrTooManyErrors, context.Canceled or
	// context.DeadlineExceeded.
	Cause error
	// Err is the last failed draw's error with ErrTooManyErrors, the
	// context's cause (context.Cause) if it differs from Cause, else nil.
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
