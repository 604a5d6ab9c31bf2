package vote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/mono"
	"github.com/sourcegraph/conc/panics"
)

// Sentinel errors, for errors.Is. Every error Race returns wraps one of them
// or the context's error.
var (
	// ErrConfig: a programming error: a Config field is negative or too
	// large, the sample budget cannot hold a lead of K, the Drawer is nil
	// (nothing is drawn then), or a valid sample has Key 0 (the race ends
	// at once).
	ErrConfig = fielderr.ErrConfig
	// ErrUndecided: the sample budget (Config.MaxSamples) was spent and no
	// key led by K. The race never falls back to a leader.
	ErrUndecided = errors.New("undecided")
	// ErrTooManyErrors: more draws failed than Config.MaxErrors allows.
	ErrTooManyErrors = errors.New("too many failed draws")
	// ErrPanic: a draw panicked (or exited its goroutine). Such a draw is a
	// failed draw: it never votes and counts against Config.MaxErrors.
	ErrPanic = errors.New("draw panicked")
)

// Sample is one draw: an answer and what it cost.
//
// Exactly one of three things holds. Err != nil: the provider failed; the
// sample never votes and counts against Config.MaxErrors (Err wins over
// Flag). Flag != nil: a red flag, the answer may not vote; it counts against
// Config.MaxSamples and its reason is counted in Tally.Flags under
// Flag.Error(), so give flags stable messages. Otherwise the sample votes
// for Key: samples with equal keys vote together, whatever their Values.
// A voting sample's Key must not be 0: 0 is what an unset Key looks like,
// and it would make every such sample vote together, so Race treats it as
// a programming error (ErrConfig), not as a vote. Keys from intent.Key are
// never 0.
type Sample[T any] struct {
	Value T
	Key   uint64
	Flag  error
	Err   error
	// Usage is added to the race's totals whether or not the sample
	// votes. If Latency is zero, Race fills in the time the draw took.
	Usage Usage
	// Voter names who cast the vote (the engine worker that drew the
	// sample); "" is one voter like any other name. It is read only
	// under Config.MinVoters above 1.
	Voter string
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

// Race draws samples until one key leads every other key by cfg.K valid
// votes, and returns that key and the Value of its first vote.
//
// Waves: Race keeps in flight the leader's need, K minus its lead over the
// runner-up (counting samples that completed but are not yet tallied),
// plus Config.Speculate, capped by Parallel and by the sample budget. So the
// first wave is min(K + Speculate, Parallel) draws (all K of them must agree
// to decide in one round trip); with Speculate = 0 a race never starts a
// draw that could only matter if a draw already in flight voted against the
// leader, and with Parallel = 1 it is the paper's sequential rule exactly.
// Speculate > 0 starts that many more, so that up to Speculate votes
// against the leader cost no extra round trip.
//
// Determinism: samples are tallied in index order, not completion order. A
// completed sample waits until every lower index is tallied, and the race
// ends at the first index d at which the tallied prefix 0..d holds a lead of
// K (or spends a budget). So Winner, Key, Votes, Valid, Flagged, Errors and
// Flags are a pure function of the mapping from index to Sample, whatever
// the goroutine schedule and whatever Parallel and Speculate: a Drawer that
// derives each sample from a seed and its index gives the same result with
// Parallel = 1 and with Parallel = 8 and Speculate = 3. With Speculate = 0,
// for a race with a winner or ErrUndecided, Launched is as well and
// Cancelled is 0: by the launch rule above, no draw past d is ever started.
// With Speculate > 0, draws past d may have started: they are cancelled,
// never tallied, and counted in Cancelled and Usage, which then depend on
// timing, as do Rounds, Wall and measured latencies. The price of
// determinism: one slow sample holds back the decision of the samples after
// it, speculation or not.
//
// With Config.MinVoters above 1, a lead of K decides only as that field
// says (the race draws on until then), and which voter cast which index
// is part of the mapping the result is a function of.
//
// The decision is the K-lead and nothing else: no early stop on a share of
// votes, no leader returned when hope runs out. Red-flagged samples and
// failed draws never vote. Once a key leads by K, nothing more is launched,
// the context of every draw still in flight is cancelled, and Race returns
// only after every draw it started has returned; draws that complete
// after the decision never vote, but their Usage counts.
//
// Errors: ErrConfig for a bad cfg or a nil draw (nothing is drawn). Without
// a winner, an *UndecidedError carrying the tally (also in the returned
// Result, whose Winner and Key are then zero), wrapping ErrUndecided when
// MaxSamples valid plus flagged samples were tallied; ErrTooManyErrors and
// the last draw's error when more than MaxErrors draws failed; ctx.Err() as
// soon as ctx is done; ErrConfig, naming the sample's index, as soon as a
// valid sample with Key 0 completes (the race ends there, whatever it had
// tallied; this one ending depends on completion order).
//
// Cost: a goroutine per draw, owned by the race and ended before it
// returns, or with Config.Workers a handoff to a goroutine kept between
// races (each draw has returned before Race does either way); a few small
// allocations per sample beyond the draw itself (see BenchmarkRace);
// memory O(distinct keys + samples in flight).
func Race[T any](ctx context.Context, cfg Config, draw Drawer[T]) (Result[T], error) {
	return race(ctx, cfg, nil, draw)
}

// race is Race, and RaceChoosing with a non-nil choose.
func race[T any](ctx context.Context, cfg Config, choose Choose[T], draw Drawer[T]) (Result[T], error) {
	start := mono.Now()
	c, err := cfg.WithDefaults()
	if err != nil {
		return Result[T]{}, err
	}
	if draw == nil {
		return Result[T]{}, fmt.Errorf("%w: nil Drawer", ErrConfig)
	}
	r := newRacer[T](c)
	if choose != nil {
		r.classes = &classes[T]{choose: choose}
	}
	if ctx.Err() != nil {
		r.stop(ctx)
	} else {
		drive(ctx, r, draw)
	}
	return r.result(mono.Since(start))
}

// drawn is a completed draw on its way back to the race.
type drawn[T any] struct {
	i int
	s Sample[T]
}

// drive runs r to its end, each draw on a goroutine of its own, and
// returns after every draw it started has returned.
func drive[T any](ctx context.Context, r *racer[T], draw Drawer[T]) {
	c := r.cfg
	raceCtx, cancel := context.WithCancel(ctx)
	// At most Parallel draws are unreceived at any time, so no send
	// blocks, even after the race stopped receiving.
	results := make(chan drawn[T], c.Parallel)
	var wg sync.WaitGroup
	spawn := func(f func()) { go f() }
	if c.Workers != nil {
		spawn = c.Workers.Go
	}
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
			w := Wave{First: first, N: n}
			wctx := context.WithValue(raceCtx, waveKey{}, w)
			for i := first; i < first+n; i++ {
				wg.Add(1)
				spawn(func() {
					defer wg.Done()
					drawOne(wctx, draw, i, results)
				})
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
				if wait := c.delay(streak); wait > 0 {
					notBefore = time.Now().Add(wait)
				}
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
	start := mono.Now()
	var s Sample[T]
	returned := false
	defer func() {
		if !returned {
			s = Sample[T]{Err: &panicError{index: i}}
		}
		if s.Usage.Latency == 0 {
			s.Usage.Latency = mono.Since(start)
		}
		results <- drawn[T]{i, s}
	}()
	if rec := catch.Try(func() { s = draw(ctx, i) }); rec != nil {
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

// Wave is a launch of draws: Race starts the draws of indices First to
// First+N-1 together, each on its own goroutine, and puts the wave in every one's context
// (WaveFrom). A Drawer may use it to serve the wave's
// samples with fewer provider requests (several choices per request), as
// package maker does; each index must still get its own sample, the same
// one it would get alone, for the race's determinism to hold.
type Wave struct{ First, N int }

type waveKey struct{}

// WaveFrom returns the wave of the draw whose context ctx is (or derives
// from), if Race launched it. Cost: a context lookup.
func WaveFrom(ctx context.Context) (Wave, bool) {
	w, ok := ctx.Value(waveKey{}).(Wave)
	return w, ok
}
