package vote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/conc/panics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errFlaky = errors.New("flaky provider")

// spec is a random vote sequence: sample i is a pure function of (seed, i).
type spec struct {
	seed                   uint64
	k, maxSamples, maxErrs int
	pErr, pFlag            float64
	weights                []float64 // per key 0..len-1
}

func randomSpec(rng *rand.Rand) spec {
	s := spec{
		seed:    rng.Uint64(),
		k:       1 + rng.IntN(5),
		maxErrs: 1 + rng.IntN(4),
		pErr:    []float64{0, 0, 0.03, 0.2}[rng.IntN(4)],
		pFlag:   []float64{0, 0.1, 0.3}[rng.IntN(3)],
	}
	if rng.IntN(2) == 0 {
		s.maxSamples = s.k + rng.IntN(30)
	}
	s.weights = make([]float64, 2+rng.IntN(4))
	for j := range s.weights {
		s.weights[j] = rng.Float64()
	}
	s.weights[0] += rng.Float64() * 2 // usually a favourite
	return s
}

func (s spec) config(parallel, speculate int) Config {
	return Config{K: s.k, Parallel: parallel, Speculate: speculate, MaxSamples: s.maxSamples, MaxErrors: s.maxErrs, Backoff: NoBackoff}
}

func (s spec) sample(i int) Sample[int] {
	u := unitFloat(hash3(s.seed, uint64(i), 0))
	smp := Sample[int]{Value: i, Usage: Usage{InputTokens: 10, OutputTokens: 1 + i%7, Latency: time.Microsecond}}
	switch {
	case u < s.pErr:
		smp.Err = fmt.Errorf("draw %d: %w", i, errFlaky)
	case u < s.pErr+s.pFlag:
		smp.Flag = []error{errors.New("too long"), errors.New("unparseable")}[i%2]
		smp.Key = 12345 // would vote if flags were ignored
	default:
		total := 0.0
		for _, w := range s.weights {
			total += w
		}
		v := unitFloat(hash3(s.seed, uint64(i), 1)) * total
		for j, w := range s.weights {
			if v < w || j == len(s.weights)-1 {
				smp.Key = uint64(j + 1) // 0 is no key
				break
			}
			v -= w
		}
	}
	return smp
}

// outcome is what the brute-force reference decides.
type outcome struct {
	cause          error // nil, ErrUndecided or ErrTooManyErrors
	key            uint64
	first          int // index of the winning key's first vote
	votes          map[uint64]int
	flags          map[string]int
	valid, flagged int
	errs           int
}

// reference is the paper's sequential rule written the obvious way: one
// sample at a time, the lead recomputed from scratch after every vote.
func reference(s spec) outcome {
	c, err := s.config(1, 0).WithDefaults()
	if err != nil {
		panic(err)
	}
	o := outcome{votes: map[uint64]int{}}
	firsts := map[uint64]int{}
	for i := 0; ; i++ {
		smp := s.sample(i)
		switch {
		case smp.Err != nil:
			o.errs++
			if o.errs > c.MaxErrors {
				o.cause = ErrTooManyErrors
				return o
			}
		case smp.Flag != nil:
			o.flagged++
			if o.flags == nil {
				o.flags = map[string]int{}
			}
			o.flags[smp.Flag.Error()]++
		default:
			o.valid++
			o.votes[smp.Key]++
			if _, ok := firsts[smp.Key]; !ok {
				firsts[smp.Key] = i
			}
			if top, lead := bruteLead(o.votes); lead >= c.K {
				o.key, o.first = top, firsts[top]
				return o
			}
		}
		if o.valid+o.flagged >= c.MaxSamples {
			o.cause = ErrUndecided
			return o
		}
	}
}

// jitter reorders completions: per index, nothing, a yield, a short sleep
// or a spin.
func jitter(seed uint64, i int) {
	h := hash3(seed, uint64(i), 2)
	switch h % 4 {
	case 1:
		runtime.Gosched()
	case 2:
		time.Sleep(time.Duration(h>>8%200) * time.Microsecond)
	case 3:
		for j := 0; j < int(h>>8%2000); j++ {
			_ = j
		}
	}
}

// TestRaceMatchesSequentialReference checks Race against the brute-force
// sequential rule over many random vote sequences (with red flags, failed
// draws and budgets): with Parallel = 1 it ends at the same sample with the
// same winner and tally, and thanks to in-order commit so does every other
// Parallel and Speculate, with draws completing in scrambled order.
func TestRaceMatchesSequentialReference(t *testing.T) {
	before := goroutinesNow()
	rng := rand.New(rand.NewPCG(42, 7))
	ctx := context.Background()
	kinds := map[error]int{}
	speculated := 0 // draws cancelled past the decision, with Speculate > 0
	for trial := range 200 {
		s := randomSpec(rng)
		want := reference(s)
		kinds[want.cause]++
		for _, ps := range []struct{ par, spec int }{{1, 0}, {2, 0}, {3, 0}, {8, 0}, {1, 2}, {3, 1}, {8, 3}} {
			par, spec := ps.par, ps.spec
			name := fmt.Sprintf("trial %d %+v parallel=%d speculate=%d", trial, s, par, spec)
			var inflight, peak atomic.Int64
			res, err := Race(ctx, s.config(par, spec), func(_ context.Context, i int) Sample[int] {
				n := inflight.Add(1)
				defer inflight.Add(-1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				if par > 1 {
					jitter(s.seed, i)
				}
				return s.sample(i)
			})
			require.Zero(t, inflight.Load(), "%s: Race returned with draws running", name)
			require.LessOrEqual(t, peak.Load(), int64(min(par, s.k+spec)), "%s: in flight", name)
			committed := want.valid + want.flagged + want.errs
			if want.cause == nil {
				require.NoError(t, err, name)
				require.Equal(t, want.key, res.Key, name)
				require.Equal(t, want.first, res.Winner, name)
				_, lead := bruteLead(res.Votes)
				require.Equal(t, s.k, lead, "%s: winner's lead at decision", name)
			} else {
				require.ErrorIs(t, err, want.cause, name)
				var ue *UndecidedError
				require.ErrorAs(t, err, &ue, name)
				require.Equal(t, res.Tally, ue.Tally, name)
				require.Zero(t, res.Key, name)
				require.Zero(t, res.Winner, name)
				if want.cause == ErrTooManyErrors {
					require.ErrorIs(t, err, errFlaky, name)
				}
			}
			require.Equal(t, want.votes, res.Votes, name)
			require.Equal(t, want.flags, res.Flags, name)
			require.Equal(t, want.valid, res.Valid, name)
			require.Equal(t, want.flagged, res.Flagged, name)
			require.Equal(t, want.errs, res.Errors, name)
			require.Equal(t, res.Launched, committed+res.Cancelled, name)
			require.Equal(t, 10*res.Launched, res.Usage.InputTokens, "%s: usage of every draw", name)
			if spec > 0 && want.cause != ErrTooManyErrors {
				speculated += res.Cancelled
			}
			if want.cause != ErrTooManyErrors && spec == 0 {
				// No draw past the deciding one is ever started.
				require.Equal(t, committed, res.Launched, name)
				require.Zero(t, res.Cancelled, name)
			}
			if par == 1 {
				require.Equal(t, committed, res.Launched, name)
				require.Equal(t, res.Launched, res.Rounds, name)
			}
		}
	}
	t.Logf("endings: %d decided, %d undecided, %d too many errors; %d speculative draws cancelled",
		kinds[nil], kinds[ErrUndecided], kinds[ErrTooManyErrors], speculated)
	assert.Positive(t, speculated, "speculation was exercised")
	// The random specs must exercise every ending.
	for _, cause := range []error{nil, ErrUndecided, ErrTooManyErrors} {
		assert.Greater(t, kinds[cause], 10, "ending %v", cause)
	}
	settle(t, before)
}

func constant(key uint64) Drawer[string] {
	return func(context.Context, int) Sample[string] {
		return Sample[string]{Value: fmt.Sprint(key), Key: key}
	}
}

func seq(keys ...uint64) Drawer[int] {
	return func(_ context.Context, i int) Sample[int] {
		return Sample[int]{Value: i, Key: keys[i%len(keys)]}
	}
}

func TestRaceUnanimousIsOneRound(t *testing.T) {
	for _, par := range []int{0, 3, 8} {
		res, err := Race(context.Background(), Config{Parallel: par}, constant(7))
		require.NoError(t, err)
		assert.Equal(t, "7", res.Winner)
		assert.Equal(t, uint64(7), res.Key)
		assert.Equal(t, map[uint64]int{7: 3}, res.Votes)
		assert.Equal(t, 3, res.Launched)
		assert.Equal(t, 1, res.Rounds, "parallel %d", par)
	}
	res, err := Race(context.Background(), Config{Parallel: 1}, constant(7))
	require.NoError(t, err)
	assert.Equal(t, 3, res.Rounds)
	assert.Positive(t, res.Wall)
}

func TestRaceWavesKeepOnlyWhatCanMatter(t *testing.T) {
	// A B A | A A: after the first wave the leader needs 2 more.
	res, err := Race(context.Background(), Config{Parallel: 8}, seq(1, 2, 1, 1, 1))
	require.NoError(t, err)
	assert.Equal(t, uint64(1), res.Key)
	assert.Equal(t, 0, res.Winner, "first vote for the winner")
	assert.Equal(t, map[uint64]int{1: 4, 2: 1}, res.Votes)
	assert.Equal(t, 5, res.Launched)
	assert.Equal(t, 2, res.Rounds)

	// K = 5, Parallel = 8: never more than 5 in flight.
	var inflight, peak atomic.Int64
	res, err = Race(context.Background(), Config{K: 5, Parallel: 8}, func(_ context.Context, i int) Sample[int] {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(time.Millisecond)
		return Sample[int]{Key: uint64(1 + i%3/2)} // 1 1 2 1 1 2 ...
	})
	require.NoError(t, err)
	assert.Equal(t, uint64(1), res.Key)
	assert.LessOrEqual(t, peak.Load(), int64(5))
	assert.Equal(t, 5, res.Votes[1]-res.Votes[2])
}

func TestRaceUndecidedNeverPicksLeader(t *testing.T) {
	res, err := Race(context.Background(), Config{K: 2, MaxSamples: 11}, seq(1, 2))
	require.ErrorIs(t, err, ErrUndecided)
	require.NotErrorIs(t, err, ErrTooManyErrors)
	var ue *UndecidedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, map[uint64]int{1: 6, 2: 5}, ue.Tally.Votes)
	assert.Equal(t, 11, ue.Tally.Valid)
	assert.Equal(t, res.Tally, ue.Tally)
	assert.Zero(t, res.Key)
	assert.Zero(t, res.Winner)
	assert.Contains(t, err.Error(), "budget of 11 samples")
}

func TestRaceRedFlagsNeverVote(t *testing.T) {
	tooLong := errors.New("over the token cap")
	draw := func(_ context.Context, i int) Sample[int] {
		if i%2 == 0 {
			return Sample[int]{Value: i, Key: 99, Flag: tooLong, Usage: Usage{OutputTokens: 1000}}
		}
		return Sample[int]{Value: i, Key: 1, Usage: Usage{OutputTokens: 10}}
	}
	res, err := Race(context.Background(), Config{Parallel: 1}, draw)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), res.Key)
	assert.Equal(t, 1, res.Winner)
	assert.Equal(t, map[uint64]int{1: 3}, res.Votes)
	assert.Equal(t, 3, res.Flagged)
	assert.Equal(t, map[string]int{"over the token cap": 3}, res.Flags)
	assert.Equal(t, 3030, res.Usage.OutputTokens)

	// Flagged samples count toward MaxSamples.
	res, err = Race(context.Background(), Config{MaxSamples: 20}, func(context.Context, int) Sample[int] {
		return Sample[int]{Key: 1, Flag: tooLong}
	})
	require.ErrorIs(t, err, ErrUndecided)
	assert.Equal(t, 20, res.Flagged)
	assert.Equal(t, 20, res.Launched)
	assert.Empty(t, res.Votes)
}

func TestRaceErrorsAreBoundedWithBackoff(t *testing.T) {
	var calls atomic.Int64
	start := time.Now()
	res, err := Race(context.Background(), Config{Parallel: 1, MaxErrors: 3, Backoff: 10 * time.Millisecond},
		func(_ context.Context, i int) Sample[int] {
			calls.Add(1)
			return Sample[int]{Key: 1, Err: fmt.Errorf("draw %d: %w", i, errFlaky), Usage: Usage{InputTokens: 5}}
		})
	elapsed := time.Since(start)
	require.ErrorIs(t, err, ErrTooManyErrors)
	require.ErrorIs(t, err, errFlaky, "the last provider error is wrapped")
	assert.Contains(t, err.Error(), "draw 3: flaky provider")
	assert.Equal(t, int64(4), calls.Load())
	assert.Equal(t, 4, res.Errors)
	assert.Empty(t, res.Votes, "failed draws never vote")
	assert.Equal(t, 20, res.Usage.InputTokens)
	// Three backoffs before draws 1, 2 and 3: at least 5 + 10 + 20 ms.
	assert.GreaterOrEqual(t, elapsed, 35*time.Millisecond)

	// Errors below the budget do not stop a race.
	res, err = Race(context.Background(), Config{Backoff: time.Nanosecond}, func(_ context.Context, i int) Sample[int] {
		if i < 2 {
			return Sample[int]{Key: 2, Err: errFlaky}
		}
		return Sample[int]{Value: i, Key: 1}
	})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Errors)
	assert.Equal(t, 2, res.Winner)
	assert.Equal(t, map[uint64]int{1: 3}, res.Votes)
}

func TestBackoffGrowsCappedAndJittered(t *testing.T) {
	base, capDelay := 10*time.Millisecond, 45*time.Millisecond
	for streak, d := range map[int]time.Duration{1: 10, 2: 20, 3: 40, 4: 45, 5: 45, 1000: 45} {
		d *= time.Millisecond
		seen := map[time.Duration]bool{}
		for range 200 {
			got := Config{Backoff: base, MaxBackoff: capDelay}.delay(streak)
			require.GreaterOrEqual(t, got, d/2, "streak %d", streak)
			require.LessOrEqual(t, got, d, "streak %d", streak)
			seen[got] = true
		}
		assert.Greater(t, len(seen), 50, "streak %d: jittered", streak)
	}
	huge := time.Duration(1<<62 + 1<<61)
	got := Config{Backoff: time.Second, MaxBackoff: huge}.delay(1 << 20)
	assert.GreaterOrEqual(t, got, huge/2, "no overflow")
	assert.LessOrEqual(t, Config{Backoff: time.Nanosecond, MaxBackoff: time.Nanosecond}.delay(3), time.Nanosecond)
}

func TestRacePanicIsAFailedDraw(t *testing.T) {
	before := goroutinesNow()
	res, err := Race(context.Background(), Config{Backoff: time.Nanosecond}, func(_ context.Context, i int) Sample[int] {
		if i == 1 {
			panic("boom")
		}
		return Sample[int]{Key: 1}
	})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Errors)
	assert.Equal(t, 3, res.Valid)

	boom := errors.New("boom")
	_, err = Race(context.Background(), Config{MaxErrors: 2, Backoff: time.Nanosecond}, func(context.Context, int) Sample[int] {
		panic(boom)
	})
	require.ErrorIs(t, err, ErrTooManyErrors)
	require.ErrorIs(t, err, ErrPanic)
	require.ErrorIs(t, err, boom, "the panic value, when an error, is wrapped")
	var rec *panics.ErrRecovered
	require.ErrorAs(t, err, &rec)
	assert.Contains(t, string(rec.Stack), "race_test.go", "the stack of the panic is kept")
	settle(t, before)
}

func TestRaceGoexitIsAFailedDraw(t *testing.T) {
	res, err := Race(context.Background(), Config{Parallel: 1, Backoff: time.Nanosecond}, func(_ context.Context, i int) Sample[int] {
		if i == 0 {
			runtime.Goexit()
		}
		return Sample[int]{Key: 1}
	})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Errors)
	assert.Equal(t, 4, res.Launched)

	_, err = Race(context.Background(), Config{MaxErrors: 1, Backoff: time.Nanosecond}, func(context.Context, int) Sample[int] {
		runtime.Goexit()
		return Sample[int]{}
	})
	require.ErrorIs(t, err, ErrPanic)
	assert.Contains(t, err.Error(), "runtime.Goexit")
}

// blockUntilCancelled draws nothing until its context ends, and records
// how many draws run.
type blockUntilCancelled struct {
	running atomic.Int64
	started chan int
}

func (b *blockUntilCancelled) draw(ctx context.Context, i int) Sample[int] {
	b.running.Add(1)
	defer b.running.Add(-1)
	if b.started != nil {
		b.started <- i
	}
	<-ctx.Done()
	return Sample[int]{Err: ctx.Err(), Usage: Usage{InputTokens: 1}}
}

// deadlineOn is a context whose deadline passes when passed is closed:
// a 30 ms timeout started before Race could pass, on a loaded machine,
// before Race launched anything.
type deadlineOn struct {
	context.Context
	passed chan struct{}
}

func (d deadlineOn) Done() <-chan struct{} { return d.passed }

func (d deadlineOn) Err() error {
	select {
	case <-d.passed:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func TestRaceEveryDrawBlocksUntilCancelled(t *testing.T) {
	before := goroutinesNow()
	b := &blockUntilCancelled{started: make(chan int, 16)}
	ctx := deadlineOn{Context: context.Background(), passed: make(chan struct{})}
	var passedAt time.Time
	go func() {
		for range 4 {
			<-b.started
		}
		passedAt = time.Now()
		close(ctx.passed)
	}()
	res, err := Race(ctx, Config{K: 4, Parallel: 6}, b.draw)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(passedAt), 10*time.Second, "ends soon after the deadline (a bound on a hang)")
	assert.Zero(t, b.running.Load(), "Race returned before its draws ended")
	var ue *UndecidedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, 4, res.Launched)
	assert.Equal(t, 4, res.Cancelled)
	assert.Zero(t, res.Errors, "cancelled draws are not provider errors")
	assert.Equal(t, 4, res.Usage.InputTokens, "cancelled draws were paid for")
	settle(t, before)
}

func TestRaceParentCancelEndsAtOnce(t *testing.T) {
	before := goroutinesNow()
	stop := errors.New("operator stopped the run")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	b := &blockUntilCancelled{started: make(chan int, 16)}
	go func() {
		<-b.started
		cancel(stop)
	}()
	res, err := Race(ctx, Config{}, b.draw)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, stop, "the context's cause is kept")
	assert.Equal(t, res.Launched, res.Cancelled)
	assert.Zero(t, b.running.Load())
	settle(t, before)

	// Already cancelled: nothing is drawn.
	called := false
	res, err = Race(ctx, Config{}, func(context.Context, int) Sample[int] { called = true; return Sample[int]{} })
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, called)
	assert.Zero(t, res.Launched)
	assert.NotNil(t, res.Votes)
}

func TestRaceCancelsInFlightDraws(t *testing.T) {
	before := goroutinesNow()
	// Draws 0 and 1 fail at once, 2 fails once draw 3 has started, and
	// every later draw blocks until cancelled. With MaxErrors 2 the race
	// ends at draw 2 with draws in flight, which must be cancelled.
	third := make(chan struct{})
	var once sync.Once
	var running atomic.Int64
	var ctxs sync.Map
	res, err := Race(context.Background(), Config{Parallel: 3, MaxErrors: 2, Backoff: time.Nanosecond},
		func(ctx context.Context, i int) Sample[int] {
			running.Add(1)
			defer running.Add(-1)
			ctxs.Store(i, ctx)
			switch {
			case i < 2:
			case i == 2:
				<-third
			default:
				once.Do(func() { close(third) })
				<-ctx.Done()
			}
			return Sample[int]{Err: errFlaky, Usage: Usage{InputTokens: 1}}
		})
	require.ErrorIs(t, err, ErrTooManyErrors)
	assert.Zero(t, running.Load(), "Race returned before its draws ended")
	assert.Equal(t, 3, res.Errors)
	assert.GreaterOrEqual(t, res.Cancelled, 1)
	assert.Equal(t, res.Launched, res.Errors+res.Cancelled)
	assert.Equal(t, res.Launched, res.Usage.InputTokens)
	ctxs.Range(func(i, ctx any) bool {
		assert.Error(t, ctx.(context.Context).Err(), "draw %d's context still live", i)
		return true
	})
	settle(t, before)
}

func TestRaceCancelsDrawContextsOnDecision(t *testing.T) {
	before := goroutinesNow()
	var mu sync.Mutex
	var ctxs []context.Context
	res, err := Race(context.Background(), Config{K: 2, Parallel: 4}, func(ctx context.Context, i int) Sample[int] {
		mu.Lock()
		ctxs = append(ctxs, ctx)
		mu.Unlock()
		return Sample[int]{Key: uint64(1 + i%3%2)} // 1 2 1 1 2 1 ...
	})
	require.NoError(t, err)
	assert.Equal(t, uint64(1), res.Key)
	require.Len(t, ctxs, res.Launched)
	for i, ctx := range ctxs {
		assert.ErrorIs(t, ctx.Err(), context.Canceled, "draw %d", i)
	}
	settle(t, before)
}

func TestRaceLatency(t *testing.T) {
	res, err := Race(context.Background(), Config{Parallel: 1}, func(context.Context, int) Sample[int] {
		time.Sleep(2 * time.Millisecond)
		return Sample[int]{Key: 1}
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res.Usage.Latency, 6*time.Millisecond, "measured when the drawer leaves it zero")
	assert.GreaterOrEqual(t, res.Wall, res.Usage.Latency)

	res, err = Race(context.Background(), Config{}, func(context.Context, int) Sample[int] {
		return Sample[int]{Key: 1, Usage: Usage{InputTokens: 3, OutputTokens: 2, Latency: time.Second}}
	})
	require.NoError(t, err)
	assert.Equal(t, Usage{InputTokens: 9, OutputTokens: 6, Latency: 3 * time.Second}, res.Usage)
}

func TestUsageAdd(t *testing.T) {
	u := Usage{InputTokens: 1, OutputTokens: 2, Latency: 3}
	u.Add(Usage{InputTokens: 10, OutputTokens: 20, Latency: 30})
	assert.Equal(t, Usage{InputTokens: 11, OutputTokens: 22, Latency: 33}, u)
}

func TestCountsAdd(t *testing.T) {
	c := Counts{Launched: 5, Valid: 3, Flagged: 1, Errors: 1}
	c.Add(Counts{Launched: 4, Valid: 3, Cancelled: 1})
	assert.Equal(t, Counts{Launched: 9, Valid: 6, Flagged: 1, Errors: 1, Cancelled: 1}, c)
	assert.Equal(t, c.Launched, c.Valid+c.Flagged+c.Errors+c.Cancelled)
}

// TestTallyJSON pins the wire names that reports and journals rely on.
func TestTallyJSON(t *testing.T) {
	b, err := json.Marshal(Usage{InputTokens: 1, OutputTokens: 2, Latency: 3})
	require.NoError(t, err)
	assert.JSONEq(t, `{"input_tokens":1,"output_tokens":2,"latency_ns":3}`, string(b))
	b, err = json.Marshal(Counts{Launched: 5, Valid: 1, Flagged: 2, Errors: 1, Cancelled: 1})
	require.NoError(t, err)
	assert.JSONEq(t, `{"launched":5,"valid":1,"flagged":2,"errors":1,"cancelled":1}`, string(b))
	res, err := Race(context.Background(), Config{Parallel: 1}, constant(7))
	require.NoError(t, err)
	res.Wall = 9
	b, err = json.Marshal(res.Tally)
	require.NoError(t, err)
	assert.JSONEq(t, `{"votes":{"7":3},"launched":3,"valid":3,"flagged":0,"errors":0,"cancelled":0,
		"usage":{"input_tokens":0,"output_tokens":0,"latency_ns":`+fmt.Sprint(int64(res.Usage.Latency))+`},"rounds":3,"wall_ns":9}`, string(b))
	var back Tally
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, res.Tally, back)
}

func TestRaceResultMapsAreTheRacesOwn(t *testing.T) {
	a, err := Race(context.Background(), Config{}, constant(1))
	require.NoError(t, err)
	b, err := Race(context.Background(), Config{}, constant(1))
	require.NoError(t, err)
	a.Votes[1] = 100
	assert.Equal(t, 3, b.Votes[1])
	assert.True(t, maps.Equal(map[uint64]int{1: 3}, b.Votes))
}

// TestErrorsBoundedWhileEarlierSampleIsSlow: failed draws behind a slow
// lower index are not yet committed, yet they must still count against the
// error budget, or a fast-failing provider is called again and again while
// sample 0 is slow.
func TestErrorsBoundedWhileEarlierSampleIsSlow(t *testing.T) {
	provider := errors.New("provider down")
	var calls atomic.Int64
	cfg := Config{K: 2, Parallel: 2, MaxErrors: 3, Backoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	// Sample 0, then MaxErrors+1 failures; at most Parallel-1 more were in
	// flight when the budget was spent.
	bound := int64(1 + cfg.MaxErrors + 1 + cfg.Parallel - 1)
	// Sample 0 stays slow until the failure that spends the budget has
	// started, and a while after (time for more draws if the budget
	// did not stop them), or until more than the bound were drawn: on a
	// timer from the race's start, a loaded machine could end it before
	// the failures, and the test then proved nothing.
	spent, over := make(chan struct{}), make(chan struct{})
	var spentOnce, overOnce sync.Once
	_, err := Race(context.Background(), cfg, func(ctx context.Context, i int) Sample[int] {
		switch n := calls.Add(1); {
		case n > bound:
			overOnce.Do(func() { close(over) })
		case n == 1+int64(cfg.MaxErrors)+1:
			spentOnce.Do(func() { close(spent) })
		}
		if i == 0 {
			select {
			case <-spent:
				select {
				case <-time.After(100 * time.Millisecond):
				case <-over:
				case <-ctx.Done():
				}
			case <-over:
			case <-ctx.Done():
			}
			return Sample[int]{Key: 1}
		}
		return Sample[int]{Err: provider}
	})
	require.ErrorIs(t, err, ErrTooManyErrors)
	assert.LessOrEqual(t, calls.Load(), bound)
}

func TestRaceSpeculation(t *testing.T) {
	// Unanimous, K = 3, Speculate = 2: one wave of 5; the race is decided
	// at index 2 and the two speculative draws are cancelled, paid for.
	res, err := Race(context.Background(), Config{Speculate: 2}, func(context.Context, int) Sample[int] {
		return Sample[int]{Key: 7, Usage: Usage{InputTokens: 1}}
	})
	require.NoError(t, err)
	assert.Equal(t, uint64(7), res.Key)
	assert.Equal(t, Counts{Launched: 5, Valid: 3, Cancelled: 2}, res.Counts)
	assert.Equal(t, 1, res.Rounds)
	assert.Equal(t, 5, res.Usage.InputTokens)

	// Same outcome as without speculation, on the same draws: A B A A A.
	plain, err := Race(context.Background(), Config{Parallel: 8}, seq(1, 2, 1, 1, 1))
	require.NoError(t, err)
	spec, err := Race(context.Background(), Config{Parallel: 8, Speculate: 3}, seq(1, 2, 1, 1, 1))
	require.NoError(t, err)
	assert.Equal(t, plain.Key, spec.Key)
	assert.Equal(t, plain.Winner, spec.Winner)
	assert.Equal(t, plain.Votes, spec.Votes)
	assert.Equal(t, 5, plain.Launched)
	assert.Zero(t, plain.Cancelled)
	assert.Equal(t, spec.Valid, plain.Valid)
	assert.GreaterOrEqual(t, spec.Launched, 6, "the first wave alone is K + Speculate")
	assert.Equal(t, spec.Launched-spec.Valid, spec.Cancelled)
}

// TestRaceSpeculationFirstWave: the first wave is min(K + Speculate,
// Parallel) draws, so a vote against the leader finds its replacement
// already in flight. Draws block until released, so the first wave's
// draws all run at once; each says its wave (WaveFrom), so they are
// counted exactly once the race is over.
func TestRaceSpeculationFirstWave(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want int
	}{
		{Config{K: 2, Parallel: 8}, 2},
		{Config{K: 2, Parallel: 8, Speculate: 2}, 4},
		{Config{K: 2, Parallel: 3, Speculate: 2}, 3},
		{Config{K: 3, Speculate: 5}, 8}, // default Parallel: K + Speculate
		{Config{K: 3, Parallel: 1, Speculate: 5}, 1},
	} {
		var started atomic.Int64
		var mu sync.Mutex
		var firstWave []Wave // the wave of each draw of the first wave
		release := make(chan struct{})
		done := make(chan Result[int])
		go func() {
			res, err := Race(context.Background(), c.cfg, func(ctx context.Context, i int) Sample[int] {
				started.Add(1)
				if w, ok := WaveFrom(ctx); ok && w.First == 0 {
					mu.Lock()
					firstWave = append(firstWave, w)
					mu.Unlock()
				}
				<-release
				return Sample[int]{Value: i, Key: 1}
			})
			assert.NoError(t, err)
			done <- res
		}()
		// The first wave's draws all start before any completes.
		require.Eventually(t, func() bool { return started.Load() >= int64(c.want) }, 5*time.Second, time.Millisecond, "%+v", c.cfg)
		close(release)
		res := <-done
		// Counted once every draw has returned, not after a pause a
		// loaded machine could make too short to see one draw too many.
		mu.Lock()
		assert.Len(t, firstWave, c.want, "%+v: first wave", c.cfg)
		for _, w := range firstWave {
			assert.Equal(t, Wave{First: 0, N: c.want}, w, "%+v", c.cfg)
		}
		mu.Unlock()
		assert.Equal(t, 0, res.Winner)
		assert.Equal(t, c.cfg.K, res.Valid)
	}
}

func TestRaceZeroKeyIsAConfigError(t *testing.T) {
	before := goroutinesNow()
	// Sample 0 is slow; sample 1 votes with Key 0. The race must end as
	// soon as sample 1 completes, without waiting for sample 0.
	var ctxs sync.Map
	start := time.Now()
	res, err := Race(context.Background(), Config{}, func(ctx context.Context, i int) Sample[int] {
		ctxs.Store(i, ctx)
		switch i {
		case 0:
			<-ctx.Done()
			return Sample[int]{Err: ctx.Err(), Usage: Usage{InputTokens: 1}}
		case 1:
			return Sample[int]{Usage: Usage{InputTokens: 1}} // Key left unset
		default:
			return Sample[int]{Key: 5, Usage: Usage{InputTokens: 1}}
		}
	})
	require.ErrorIs(t, err, ErrConfig)
	assert.ErrorContains(t, err, "sample 1 ")
	assert.ErrorContains(t, err, "Key 0")
	assert.NotErrorIs(t, err, ErrUndecided)
	var ue *UndecidedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, res.Tally, ue.Tally)
	assert.Zero(t, res.Key)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, res.Launched, res.Usage.InputTokens, "every draw was paid for")
	assert.Equal(t, res.Launched, res.Valid+res.Flagged+res.Errors+res.Cancelled)
	ctxs.Range(func(i, ctx any) bool {
		assert.Error(t, ctx.(context.Context).Err(), "draw %d's context still live", i)
		return true
	})
	settle(t, before)

	// Red-flagged and failed samples do not vote, so their Key does not
	// matter.
	res, err = Race(context.Background(), Config{Backoff: NoBackoff}, func(_ context.Context, i int) Sample[int] {
		switch i {
		case 0:
			return Sample[int]{Flag: errors.New("too long")}
		case 1:
			return Sample[int]{Err: errFlaky}
		}
		return Sample[int]{Key: 3}
	})
	require.NoError(t, err)
	assert.Equal(t, uint64(3), res.Key)

	// The synchronous driver of the core agrees.
	_, err = runSync(Config{K: 2}, func(i int) Sample[int] { return Sample[int]{Key: uint64(i % 2)} })
	require.ErrorIs(t, err, ErrConfig)
}
