package vote

import (
	"context"
	"fmt"
	"time"

	"github.com/mdap-go/mdap/internal/catch"
	"github.com/mdap-go/mdap/internal/mono"
)

// RaceInline is Race with one draw at a time (Parallel = 1, Speculate = 0,
// whatever cfg says), every draw on the calling goroutine: no hand-off to
// a worker, no channel, no cancellable context per race. For a drawer
// that answers without waiting (a simulated or cached model), or for the
// paper's sequential rule, it is the cheapest way to run a race.
//
// Its result is exactly Race's with Parallel = 1 and Speculate = 0: the
// same Winner, Key, Votes, counts, Flags, Rounds and errors for the same
// mapping from index to Sample (TestRaceInlineIsRaceSequential checks
// it); only Wall and measured latencies differ. Backoff after a failed
// draw, the budgets, a recovered panic (a failed draw wrapping ErrPanic)
// and a valid sample with Key 0 (ErrConfig) behave as in Race; ctx is
// passed to each draw as it is.
//
// One difference: a draw that calls runtime.Goexit ends the calling
// goroutine, as any function it calls would, where Race counts it as a
// failed draw. Errors: Race's. Cost: a few small allocations per race
// and none per sample beyond the draw and its recovery (see
// BenchmarkRaceInline).
func RaceInline[T any](ctx context.Context, cfg Config, draw Drawer[T]) (Result[T], error) {
	start := mono.Now()
	c, err := cfg.WithDefaults()
	if err != nil {
		return Result[T]{}, err
	}
	if draw == nil {
		return Result[T]{}, fmt.Errorf("%w: nil Drawer", ErrConfig)
	}
	c.Parallel, c.Speculate = 1, 0
	r := newRacer[T](c)
	streak := 0 // failed draws in a row
	for !r.over {
		if ctx.Err() != nil {
			r.stop(ctx)
			break
		}
		if r.plan() == 0 {
			continue // plan ended the race: nothing in flight, nothing to launch
		}
		i := r.launch(1)
		s := drawInline(ctx, draw, i)
		if ctx.Err() != nil {
			r.inflight--
			r.late(s)
			r.stop(ctx)
			break
		}
		r.complete(i, s)
		if s.Err == nil {
			streak = 0
			continue
		}
		streak++
		if wait := c.delay(streak); wait > 0 && !r.over {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				r.stop(ctx)
			case <-t.C:
			}
			t.Stop()
		}
	}
	return r.result(mono.Since(start))
}

// drawInline calls draw for index i on the calling goroutine, a panic
// recovered into a failed draw wrapping ErrPanic, and fills in the
// latency if the drawer did not.
func drawInline[T any](ctx context.Context, draw Drawer[T], i int) (s Sample[T]) {
	start := mono.Now()
	rec := catch.Try(func() { s = draw(ctx, i) })
	if rec != nil {
		s = Sample[T]{Err: &panicError{index: i, rec: rec}}
	}
	if s.Usage.Latency == 0 {
		s.Usage.Latency = mono.Since(start)
	}
	return s
}
