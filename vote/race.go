package vote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sourcegraph/conc/panics"
)

// Sentinel errors, for errors.Is. Every error Race returns wraps one of them
// or the context's error.
var (
	// ErrConfig: a Config field is negative, the sample budget cannot hold
	// a lead of K, or the Drawer is nil.
	ErrConfig = errors.New("invalid vote config")
	// ErrUndecided: the sample budget (Config.MaxSamples) was spent and no
	// key led by K. The race never falls back to a leader.
	ErrUndecided = errors.New("undecided")
	// ErrTooManyErrors: more draws failed than Config.MaxErrors allows.
	ErrTooManyErrors = errors.New("too many failed draws")
	// ErrPanic: a draw panicked (or exited its goroutine). Such a draw is a
	// failed draw: it never votes and counts against Config.MaxErrors.
	ErrPanic = errors.New("draw panicked")
)

// Defaults that a zero Config field takes. See Config.
const (
	DefaultK           = 3   // the paper's margin
	DefaultSamplesPerK = 100 // MaxSamples defaults to DefaultSamplesPerK * K
	DefaultMaxErrors   = 10
	DefaultBackoff     = 100 * time.Millisecond
	DefaultMaxBackoff  = 5 * time.Second
)

// Upper bounds on Config fields, against typos and overflow.
const (
	maxConfigK          = 1 << 20
	maxConfigParallel   = 1 << 16
	maxConfigMaxSamples = 1 << 30
)

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

// Sample is one draw: an answer and what it cost.
//
// Exactly one of three things holds. Err != nil: the provider failed; the
// sample never votes and counts against Config.MaxErrors (Err wins over
// Flag). Flag != nil: a red flag, the answer may not vote; it counts against
// Config.MaxSamples and its reason is counted in Tally.Flags under
// Flag.Error(), so give flags stable messages. Otherwise the sample votes
// for Key: samples with equal keys vote together, whatever their Values.
type Sample[T any] struct {
	Value T
	Key   uint64
	Flag  error
	Err   error
	// Usage is added to the race's totals whether or not the sample
	// votes. If Latency is zero, Race fills in the time the draw took.
	Usage Usage
}

// Drawer draws the sample with index i (0, 1, 2, ..., each index once per
// race). It is called from up to Config.Parallel goroutines at once, so it
// must be safe for concurrent use. It must return soon after ctx is done:
// Race waits for every draw it started, and a sample that never returns
// holds the race (put a timeout on provider calls; a timed-out call is a
// failed draw). For a reproducible race, make the sample a function of i
// (for example, seed its randomness from a run seed, the step and i), never
// of shared state or of the order in which draws run. A panic in a Drawer is
// recovered and counts as a failed draw wrapping ErrPanic.
type Drawer[T any] func(ctx context.Context, i int) Sample[T]

// Config sets a race's margin, parallelism and budgets. The zero value is
// the paper's setting: every zero field takes its default, given below.
// Negative fields are an error wrapping ErrConfig.
type Config struct {
	// K is the margin: the first key with K more votes than every other
	// key wins. Default DefaultK (3). K = 1 is "first valid vote wins".
	K int
	// Parallel is the most samples in flight at once. Default K, so that
	// a unanimous race decides in one round trip. Parallel = 1 is the
	// paper's sequential rule: one sample at a time.
	Parallel int
	// MaxSamples bounds the valid plus red-flagged samples: when that many
	// are tallied without a winner, Race fails with ErrUndecided. Failed
	// draws do not count here (see MaxErrors). Default DefaultSamplesPerK
	// * K; it must be at least K.
	MaxSamples int
	// MaxErrors is the number of failed draws tolerated: one more ends
	// the race with ErrTooManyErrors. Default DefaultMaxErrors (10).
	MaxErrors int
	// Backoff is the base delay before the next launch after a failed
	// draw; it doubles with each failure in a row, up to MaxBackoff, and
	// is jittered uniformly into [d/2, d]. A successful draw resets it.
	// Jitter comes from math/rand/v2 and only moves launches in time,
	// never changes a result. Default DefaultBackoff (100ms); set 1ns for
	// practically none.
	Backoff time.Duration
	// MaxBackoff caps the delay. Default DefaultMaxBackoff (5s); a cap
	// below Backoff is raised to Backoff.
	MaxBackoff time.Duration
}

// WithDefaults returns c with every zero field set to its default. It fails
// with an error wrapping ErrConfig if a field is negative or absurdly large,
// or if MaxSamples is below K (no race could then be won).
func (c Config) WithDefaults() (Config, error) {
	switch {
	case c.K < 0, c.Parallel < 0, c.MaxSamples < 0, c.MaxErrors < 0, c.Backoff < 0, c.MaxBackoff < 0:
		return c, fmt.Errorf("%w: negative field in %+v", ErrConfig, c)
	case c.K > maxConfigK, c.Parallel > maxConfigParallel, c.MaxSamples > maxConfigMaxSamples:
		return c, fmt.Errorf("%w: K, Parallel or MaxSamples too large in %+v", ErrConfig, c)
	}
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.Parallel == 0 {
		c.Parallel = c.K
	}
	if c.MaxSamples == 0 {
		c.MaxSamples = DefaultSamplesPerK * c.K
	}
	if c.MaxErrors == 0 {
		c.MaxErrors = DefaultMaxErrors
	}
	if c.Backoff == 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	c.MaxBackoff = max(c.MaxBackoff, c.Backoff)
	if c.MaxSamples < c.K {
		return c, fmt.Errorf("%w: MaxSamples %d cannot hold a lead of K = %d", ErrConfig, c.MaxSamples, c.K)
	}
	return c, nil
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

// Race draws samples until one key leads every other key by cfg.K valid
// votes, and returns that key and the Value of its first vote.
//
// Waves: Race first launches min(K, Parallel) draws (all of them must agree
// to decide in one round trip), then keeps in flight only as many as can
// still matter: the leader's need, K minus its lead over the runner-up,
// counting samples that completed but are not yet tallied, capped by
// Parallel. So a race never starts a draw that could only matter if a draw
// already in flight voted against the leader, and with Parallel = 1 it is
// the paper's sequential rule exactly.
//
// Determinism: samples are tallied in index order, not completion order. A
// completed sample waits until every lower index is tallied, and the race
// ends at the first index d at which the tallied prefix 0..d holds a lead of
// K (or spends a budget). So Winner, Key, Votes, Valid, Flagged, Errors and
// Flags are a pure function of the mapping from index to Sample, whatever
// the goroutine schedule and whatever Parallel: a Drawer that derives each
// sample from a seed and its index gives the same result with Parallel = 1
// and Parallel = 8. For a race with a winner or ErrUndecided, Launched is as
// well, and Cancelled is 0: by the launch rule above, no draw past d is ever
// started. Only Rounds, Wall and measured latencies depend on timing. The
// price: one slow sample holds back the decision of the samples after it.
//
// The decision is the K-lead and nothing else: no early stop on a share of
// votes, no leader returned when hope runs out. Red-flagged samples and
// failed draws never vote. Once a key leads by K, nothing more is launched,
// the context of every draw still in flight is cancelled, and Race returns
// only after every goroutine it started has ended; draws that complete
// after the decision never vote, but their Usage counts.
//
// Errors: ErrConfig for a bad cfg or a nil draw (nothing is drawn). Without
// a winner, an *UndecidedError carrying the tally (also in the returned
// Result, whose Winner and Key are then zero), wrapping ErrUndecided when
// MaxSamples valid plus flagged samples were tallied; ErrTooManyErrors and
// the last draw's error when more than MaxErrors draws failed; ctx.Err() as
// soon as ctx is done.
//
// Cost: one goroutine per draw; about a microsecond and a handful of small
// allocations per sample beyond the draw itself (see the package doc).
func Race[T any](ctx context.Context, cfg Config, draw Drawer[T]) (Result[T], error) {
	start := time.Now()
	c, err := cfg.WithDefaults()
	if err != nil {
		return Result[T]{}, err
	}
	if draw == nil {
		return Result[T]{}, fmt.Errorf("%w: nil Drawer", ErrConfig)
	}
	r := newRacer[T](c)
	if ctx.Err() != nil {
		r.stop(ctx)
	} else {
		drive(ctx, r, draw)
	}
	return r.result(time.Since(start))
}

// drawn is a completed draw on its way back to the race.
type drawn[T any] struct {
	i int
	s Sample[T]
}

// drive runs r to its end, drawing from goroutines it owns, and returns
// after all of them have ended.
func drive[T any](ctx context.Context, r *racer[T], draw Drawer[T]) {
	c := r.cfg
	raceCtx, cancel := context.WithCancel(ctx)
	// At most Parallel draws are unreceived at any time, so no send
	// blocks, even after the race stopped receiving.
	results := make(chan drawn[T], c.Parallel)
	var wg sync.WaitGroup
	var timer *time.Timer
	defer func() {
		cancel()
		wg.Wait()
		close(results)
		for d := range results {
			r.late(d.s)
		}
		if timer != nil {
			timer.Stop()
		}
	}()

	var notBefore time.Time // backoff: no launch before this
	streak := 0             // failed draws in a row, by completion
	for !r.over {
		n := r.plan()
		var wait time.Duration
		if n > 0 && !notBefore.IsZero() {
			if wait = time.Until(notBefore); wait > 0 {
				n = 0
			} else {
				notBefore = time.Time{}
			}
		}
		if n > 0 {
			first := r.launch(n)
			wg.Add(n)
			for i := first; i < first+n; i++ {
				go func() {
					defer wg.Done()
					drawOne(raceCtx, draw, i, results)
				}()
			}
		}
		if r.over {
			break
		}
		var tick <-chan time.Time
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			tick = timer.C
		}
		select {
		case d := <-results:
			if ctx.Err() != nil {
				r.inflight--
				r.late(d.s)
				r.stop(ctx)
				break
			}
			if d.s.Err != nil {
				streak++
				notBefore = time.Now().Add(backoff(c.Backoff, c.MaxBackoff, streak))
			} else {
				streak = 0
			}
			r.complete(d.i, d.s)
		case <-ctx.Done():
			r.stop(ctx)
		case <-tick:
		}
	}
}

// drawOne calls draw for index i and sends the sample to results, even if
// draw panics (recovered) or calls runtime.Goexit (which recover cannot
// see): either is a failed draw wrapping ErrPanic. It fills in the latency
// if the drawer did not.
func drawOne[T any](ctx context.Context, draw Drawer[T], i int, results chan<- drawn[T]) {
	start := time.Now()
	var s Sample[T]
	returned := false
	defer func() {
		if !returned {
			s = Sample[T]{Err: &panicError{index: i}}
		}
		if s.Usage.Latency == 0 {
			s.Usage.Latency = time.Since(start)
		}
		results <- drawn[T]{i, s}
	}()
	if rec := panics.Try(func() { s = draw(ctx, i) }); rec != nil {
		s = Sample[T]{Err: &panicError{index: i, rec: rec}}
	}
	returned = true
}

// panicError is a draw that panicked or exited its goroutine.
type panicError struct {
	index int
	rec   *panics.Recovered // nil for runtime.Goexit
}

func (e *panicError) Error() string {
	if e.rec == nil {
		return fmt.Sprintf("vote: draw %d exited without returning (runtime.Goexit)", e.index)
	}
	return fmt.Sprintf("vote: draw %d panicked: %v", e.index, e.rec.Value)
}

// Unwrap returns ErrPanic and the recovered panic, a *panics.ErrRecovered
// that carries the stack.
func (e *panicError) Unwrap() []error {
	if e.rec == nil {
		return []error{ErrPanic}
	}
	return []error{ErrPanic, e.rec.AsError()}
}

// backoff is the delay after the streak-th failed draw in a row: base
// doubled streak-1 times, capped at maxDelay, jittered into [d/2, d].
func backoff(base, maxDelay time.Duration, streak int) time.Duration {
	d := base
	for j := 1; j < streak && d < maxDelay; j++ {
		if d > maxDelay/2 {
			d = maxDelay
			break
		}
		d *= 2
	}
	d = min(d, maxDelay)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}
