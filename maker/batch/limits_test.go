package batch

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models/ratelimit"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// counting is a model that counts the calls in flight inside it and
// remembers the most at once.
type counting struct {
	now, peak atomic.Int64
	calls     atomic.Int64
	hold      time.Duration
	// fail, if set, may fail call n (from 0).
	fail func(n int64) error
	// starts records when each call started.
	mu     sync.Mutex
	starts []time.Time
}

func (c *counting) GenerateContent(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	n := c.calls.Add(1) - 1
	c.mu.Lock()
	c.starts = append(c.starts, time.Now())
	c.mu.Unlock()
	in := c.now.Add(1)
	defer c.now.Add(-1)
	for {
		p := c.peak.Load()
		if in <= p || c.peak.CompareAndSwap(p, in) {
			break
		}
	}
	if c.hold > 0 {
		select {
		case <-time.After(c.hold):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.fail != nil {
		if err := c.fail(n); err != nil {
			return nil, err
		}
	}
	return maker.TextResponse(`{"ok": true}`, "stop"), nil
}

func (c *counting) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, p, o...)
}

func (c *counting) startTimes() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.starts...)
}

// hammer makes calls from goroutines callers, each calls times.
func hammer(t *testing.T, m llms.Model, callers, calls int) []error {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, callers*calls)
	for g := range callers {
		wg.Go(func() {
			for i := range calls {
				_, errs[g*calls+i] = m.GenerateContent(context.Background(), nil)
			}
		})
	}
	wg.Wait()
	return errs
}

func TestLimitsInFlightNeverExceeded(t *testing.T) {
	l, err := NewLimits(LimitConfig{MaxInFlight: 3})
	require.NoError(t, err)
	// Two models behind the same limits share them.
	a, b := &counting{hold: 2 * time.Millisecond}, &counting{hold: 2 * time.Millisecond}
	wa, wb := l.Wrap(a), l.Wrap(b)
	var wg sync.WaitGroup
	wg.Go(func() { hammer(t, wa, 8, 5) })
	wg.Go(func() { hammer(t, wb, 8, 5) })
	wg.Wait()
	assert.LessOrEqual(t, a.peak.Load()+b.peak.Load(), int64(3+3), "sanity")
	st := l.Stats()
	assert.LessOrEqual(t, st.PeakInFlight, int64(3), "never more than MaxInFlight calls in flight, over both models")
	assert.GreaterOrEqual(t, st.PeakInFlight, int64(2), "the calls did overlap")
	assert.Equal(t, int64(80), st.Calls)
	assert.Zero(t, st.InFlight, "every slot was released")

	// Without the limit the same load overlaps far more: the test can fail.
	c := &counting{hold: 5 * time.Millisecond}
	hammer(t, c, 16, 2)
	assert.Greater(t, c.peak.Load(), int64(3))
}

func TestLimitsInFlightCountedInsideTheModel(t *testing.T) {
	l, err := NewLimits(LimitConfig{MaxInFlight: 2})
	require.NoError(t, err)
	c := &counting{hold: 3 * time.Millisecond}
	hammer(t, l.Wrap(c), 10, 4)
	assert.LessOrEqual(t, c.peak.Load(), int64(2), "the model itself never sees more than 2 calls at once")
	assert.Equal(t, int64(40), c.calls.Load())
}

func TestLimitsRPMSpacesCalls(t *testing.T) {
	// 1200 per minute, burst 1: a call every 50ms. Only lower bounds on
	// time are asserted: a slow machine makes them truer, never false.
	l, err := NewLimits(LimitConfig{RPM: 1200})
	require.NoError(t, err)
	a, b := &counting{}, &counting{}
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() { hammer(t, l.Wrap(a), 2, 2) })
	wg.Go(func() { hammer(t, l.Wrap(b), 1, 2) })
	wg.Wait()
	// 6 calls: the first at once, 5 more at least 50ms apart.
	assert.GreaterOrEqual(t, time.Since(start), 5*50*time.Millisecond-10*time.Millisecond)
	starts := append(a.startTimes(), b.startTimes()...)
	require.Len(t, starts, 6)
}

func rateLimitErr(msg string) error {
	return openai.MapError(fmt.Errorf("API returned unexpected status code: 429: %s", msg))
}

func TestPauseAfterRateLimitHoldsEveryCaller(t *testing.T) {
	const pause = 150 * time.Millisecond
	l, err := NewLimits(LimitConfig{MaxInFlight: 2})
	require.NoError(t, err)
	var limitedAt atomic.Int64 // when the 429 was returned, unix nanos
	c := &counting{hold: time.Millisecond}
	c.fail = func(n int64) error {
		if n == 10 {
			limitedAt.Store(time.Now().UnixNano())
			return rateLimitErr("Please try again in 150ms.")
		}
		return nil
	}
	errs := hammer(t, l.Wrap(c), 6, 8)
	failures := 0
	for _, err := range errs {
		if err != nil {
			failures++
			assert.True(t, ratelimit.IsRateLimited(err))
		}
	}
	assert.Equal(t, 1, failures, "without Retries the 429 goes back to its caller")
	at := time.Unix(0, limitedAt.Load())
	// Causality: once the wrapper has seen the 429, no call starts until
	// the pause has passed. Calls that held a slot before it (at most
	// MaxInFlight-1 others) may still start inside the window.
	inside := 0
	for _, s := range c.startTimes() {
		if s.After(at) && s.Before(at.Add(pause)) {
			inside++
		}
	}
	assert.LessOrEqual(t, inside, 1, "at most MaxInFlight-1 calls start during the pause")
	st := l.Stats()
	assert.Equal(t, int64(1), st.RateLimited)
	assert.GreaterOrEqual(t, st.Paused, int64(1))
}

func TestRetriesAfterPause(t *testing.T) {
	l, err := NewLimits(LimitConfig{Retries: 2, Cooldown: 10 * time.Millisecond})
	require.NoError(t, err)
	var fails atomic.Int64
	c := &counting{fail: func(n int64) error {
		if n < 2 {
			fails.Add(1)
			return rateLimitErr("Rate limit reached")
		}
		return nil
	}}
	start := time.Now()
	_, err = l.Wrap(c).GenerateContent(context.Background(), nil)
	require.NoError(t, err, "two 429s, two retries: the third try succeeds")
	// Cooldowns without a named delay double: 10ms, then 20ms.
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond-2*time.Millisecond)
	assert.Equal(t, int64(2), l.Stats().Retried)

	c2 := &counting{fail: func(int64) error { return rateLimitErr("Rate limit reached") }}
	_, err = l.Wrap(c2).GenerateContent(context.Background(), nil)
	assert.True(t, ratelimit.IsRateLimited(err), "after Retries the error goes back")
	assert.Equal(t, int64(3), c2.calls.Load(), "one try and two retries, no more")
}

func TestPauseRules(t *testing.T) {
	l, err := NewLimits(LimitConfig{Cooldown: 100 * time.Millisecond, MaxCooldown: 300 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, 100*time.Millisecond, l.Pause(0))
	assert.Equal(t, 200*time.Millisecond, l.Pause(0), "doubles in a row")
	assert.Equal(t, 300*time.Millisecond, l.Pause(0), "capped")
	assert.Equal(t, 300*time.Millisecond, l.Pause(time.Hour), "a named delay is capped too")
	until := l.PausedUntil()
	l.Pause(time.Millisecond)
	assert.Equal(t, until, l.PausedUntil(), "a shorter pause never shortens one in effect")
	l.succeeded()
	assert.Equal(t, 100*time.Millisecond, l.Pause(0), "a success resets the doubling")
}

func TestAcquireEndsWithItsContext(t *testing.T) {
	l, err := NewLimits(LimitConfig{MaxInFlight: 1})
	require.NoError(t, err)
	l.Pause(time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = l.Acquire(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	// The slot was given back: with the pause over, a call gets it.
	l.mu.Lock()
	l.until = time.Time{}
	l.mu.Unlock()
	release, err := l.Acquire(context.Background())
	require.NoError(t, err)
	release()
	release() // idempotent
	assert.Zero(t, l.Stats().InFlight)
}

// Validate names the field, its value and the fix, as a *sim.FieldError
// a command maps to its flags.
func TestLimitConfigValidateNamesTheField(t *testing.T) {
	for _, c := range []struct {
		cfg  LimitConfig
		want string
	}{
		{LimitConfig{MaxInFlight: -1}, "invalid configuration: batch.LimitConfig: MaxInFlight = -1: use 1 or more, or 0 for no bound"},
		{LimitConfig{RPM: math.Inf(1)}, "invalid configuration: batch.LimitConfig: RPM = +Inf: use a positive number of requests per minute, or 0 for no bound"},
		{LimitConfig{RPM: math.NaN()}, "invalid configuration: batch.LimitConfig: RPM = NaN: use a positive number of requests per minute, or 0 for no bound"},
		{LimitConfig{Burst: -2}, "invalid configuration: batch.LimitConfig: Burst = -2: use 1 or more, or 0 for 1"},
		{LimitConfig{Cooldown: -time.Second}, "invalid configuration: batch.LimitConfig: Cooldown = -1s: use a positive duration, or 0 for DefaultCooldown"},
		{LimitConfig{MaxCooldown: -time.Second}, "invalid configuration: batch.LimitConfig: MaxCooldown = -1s: use a positive duration, or 0 for DefaultMaxCooldown"},
		{LimitConfig{Retries: -1}, "invalid configuration: batch.LimitConfig: Retries = -1: use 0 or more"},
	} {
		err := c.cfg.Validate()
		assert.EqualError(t, err, c.want)
		var fe *sim.FieldError
		assert.ErrorAs(t, err, &fe)
		assert.ErrorIs(t, err, ErrConfig)
	}
	assert.NoError(t, LimitConfig{MaxInFlight: 1, RPM: 60, Burst: 1, Cooldown: time.Second, MaxCooldown: time.Second, Retries: 1}.Validate())
}

func TestNewLimitsErrors(t *testing.T) {
	for _, c := range []LimitConfig{{MaxInFlight: -1}, {RPM: -1}, {Burst: -2}, {Cooldown: -1}, {Retries: -1}} {
		_, err := NewLimits(c)
		assert.ErrorIs(t, err, ErrConfig, "%+v", c)
	}
}

type priced struct{ counting }

func (p *priced) Price() maker.Price { return maker.Price{InputPerMillion: 1} }
func (p *priced) Identity() string   { return "priced-model" }
func (p *priced) GenerateContent(ctx context.Context, m []llms.MessageContent, o ...llms.CallOption) (*llms.ContentResponse, error) {
	return p.counting.GenerateContent(ctx, m, o...)
}

func TestWrapKeepsIdentityPriceAndEnsemble(t *testing.T) {
	l, err := NewLimits(LimitConfig{})
	require.NoError(t, err)
	p := &priced{}
	w := l.Wrap(p)
	assert.Equal(t, "priced-model", maker.ModelIdentity(w))
	pr, ok := w.(maker.Priced)
	require.True(t, ok)
	assert.Equal(t, 1.0, pr.Price().InputPerMillion)
	assert.Same(t, w, l.Wrap(w), "wrapping twice with the same limits is a no-op")
	_, ok = l.Wrap(&counting{}).(maker.Priced)
	assert.False(t, ok, "a model without a price gets none")
	assert.Equal(t, maker.ModelIdentity(&counting{}), maker.ModelIdentity(l.Wrap(&counting{})))

	e, err := maker.NewEnsemble(p, &counting{})
	require.NoError(t, err)
	we, ok := l.Wrap(e).(*maker.Ensemble)
	require.True(t, ok, "an ensemble stays an ensemble")
	assert.Equal(t, e.Identity(), we.Identity())
	for _, m := range we.Members() {
		_, ok := m.(*limited)
		_, okP := m.(*limitedPriced)
		assert.True(t, ok || okP, "every member goes through the limits")
	}
	var nl *Limits
	assert.Same(t, p, nl.Wrap(p).(*priced))
}

func TestTransportPausesForRetryAfterHeader(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "2")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}`))
	}))
	defer srv.Close()
	l, err := NewLimits(LimitConfig{Cooldown: 10 * time.Millisecond})
	require.NoError(t, err)
	m, err := openai.New(openai.WithBaseURL(srv.URL), openai.WithToken("x"), openai.WithModel("tiny"),
		openai.WithHTTPClient(&http.Client{Transport: l.Transport(nil)}))
	require.NoError(t, err)
	before := time.Now()
	_, err = l.Wrap(m).GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	require.Error(t, err)
	assert.True(t, ratelimit.IsRateLimited(err))
	// The header's 2s, not the 10ms cooldown: the header was read.
	assert.GreaterOrEqual(t, l.PausedUntil().Sub(before), 2*time.Second)
}
