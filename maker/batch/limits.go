package batch

import (
	"context"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/ratelimit"
	"github.com/tmc/langchaingo/llms"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
)

// Defaults of a LimitConfig's zero fields.
const (
	// DefaultCooldown is the pause after a rate-limit answer that names no
	// delay. It doubles with each such answer in a row.
	DefaultCooldown = time.Second
	// DefaultMaxCooldown caps every pause, named or not.
	DefaultMaxCooldown = time.Minute
)

// LimitConfig configures Limits. The zero value limits nothing but still
// pauses every call after a rate-limit answer.
type LimitConfig struct {
	// MaxInFlight is the most model calls in flight at once over every
	// model the Limits wrap, whatever the number of tasks and samples; 0
	// means no bound. A call waiting for its turn holds no connection.
	MaxInFlight int `flag:"max-inflight" usage:"most model calls in flight at once, over all tasks (0: no bound)"`
	// RPM is the most calls started per minute over every wrapped model
	// (a token bucket); 0 means no bound.
	RPM float64 `flag:"rpm" usage:"most model calls started per minute, over all tasks (0: no bound)"`
	// Burst is how many calls may start at once when the bucket is full;
	// 0 means 1: calls are spaced evenly, 60/RPM seconds apart.
	Burst int
	// Cooldown is the pause after a rate-limit answer that names no delay;
	// it doubles with each such answer in a row (a call that succeeds
	// resets it), up to MaxCooldown. 0 means DefaultCooldown.
	Cooldown time.Duration
	// MaxCooldown caps every pause, including a delay the provider names.
	// 0 means DefaultMaxCooldown.
	MaxCooldown time.Duration
	// Retries is how many times a rate-limited call is tried again, after
	// the pause, before its error goes back to the caller (the solver,
	// which counts it against the step's error budget). 0 means none.
	Retries int
}

// Limits are provider limits shared by every model they wrap, so that
// many tasks and solvers together respect one provider's bounds: calls in
// flight (a weighted semaphore), calls started per minute (a token bucket,
// golang.org/x/time/rate) and, after a rate-limit answer, a pause that
// every caller honours until the delay has passed (the delay the answer
// names, else the configured cooldown).
//
// Safe for concurrent use. Cost per call: a semaphore acquire, a token
// reservation and a look at the pause, each a short mutex section, and no
// goroutine; a caller that must wait sleeps on a timer and wakes when its
// context ends.
type Limits struct {
	cfg LimitConfig
	sem *semaphore.Weighted
	lim *rate.Limiter

	mu     sync.Mutex
	until  time.Time // no call starts before this
	named  time.Time // when the last pause of a named delay began
	streak int       // rate-limit answers without a named delay, in a row

	calls, rateLimited, retried, paused atomic.Int64
	inFlight, peak                      atomic.Int64
}

// Validate returns nil or a *maker.FieldError wrapping ErrConfig that
// names the first bad field of c, its value and the fix: a negative
// field ("MaxInFlight = -1: use 1 or more, or 0 for no bound"), or an RPM
// that is not a finite number. A command maps the field names to its
// flags (maker solve does). Cost: O(1).
func (c LimitConfig) Validate() error {
	bad := func(name string, v any, fix string) error {
		return &fielderr.Error{Config: "batch.LimitConfig", Fields: []fielderr.Field{{Name: name, Value: v}}, Fix: fix}
	}
	switch {
	case c.MaxInFlight < 0:
		return bad("MaxInFlight", c.MaxInFlight, "use 1 or more, or 0 for no bound")
	case !(c.RPM >= 0) || math.IsInf(c.RPM, 0):
		return bad("RPM", c.RPM, "use a positive number of requests per minute, or 0 for no bound")
	case c.Burst < 0:
		return bad("Burst", c.Burst, "use 1 or more, or 0 for 1")
	case c.Cooldown < 0:
		return bad("Cooldown", c.Cooldown, "use a positive duration, or 0 for DefaultCooldown")
	case c.MaxCooldown < 0:
		return bad("MaxCooldown", c.MaxCooldown, "use a positive duration, or 0 for DefaultMaxCooldown")
	case c.Retries < 0:
		return bad("Retries", c.Retries, "use 0 or more")
	}
	return nil
}

// NewLimits returns limits configured by c. Errors: c.Validate's.
func NewLimits(c LimitConfig) (*Limits, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Burst == 0 {
		c.Burst = 1
	}
	if c.Cooldown == 0 {
		c.Cooldown = DefaultCooldown
	}
	if c.MaxCooldown == 0 {
		c.MaxCooldown = DefaultMaxCooldown
	}
	c.MaxCooldown = max(c.MaxCooldown, c.Cooldown)
	l := &Limits{cfg: c}
	if c.MaxInFlight > 0 {
		l.sem = semaphore.NewWeighted(int64(c.MaxInFlight))
	}
	if c.RPM > 0 {
		l.lim = rate.NewLimiter(rate.Limit(c.RPM/60), c.Burst)
	}
	return l, nil
}

// Config returns the configuration with its defaults filled in.
func (l *Limits) Config() LimitConfig { return l.cfg }

// LimitStats are counters of the calls that went through Limits.
type LimitStats struct {
	// Calls counts calls started (a retry is another call).
	Calls int64 `json:"calls"`
	// RateLimited counts rate-limit answers; Retried the calls tried again
	// after one.
	RateLimited int64 `json:"rate_limited"`
	Retried     int64 `json:"retried"`
	// Paused counts calls that waited for a pause to end.
	Paused int64 `json:"paused"`
	// InFlight is the number of calls in flight now; PeakInFlight the
	// most at once so far.
	InFlight     int64 `json:"in_flight"`
	PeakInFlight int64 `json:"peak_in_flight"`
}

// Stats returns the counters so far.
func (l *Limits) Stats() LimitStats {
	return LimitStats{
		Calls: l.calls.Load(), RateLimited: l.rateLimited.Load(), Retried: l.retried.Load(),
		Paused: l.paused.Load(), InFlight: l.inFlight.Load(), PeakInFlight: l.peak.Load(),
	}
}

// Pause makes every caller wait until d has passed from now before its
// next call starts; a pause already longer is kept. d <= 0 means the
// configured cooldown, doubled for each such pause in a row (see
// LimitConfig.Cooldown). Every pause is capped at MaxCooldown. It returns
// the pause applied.
func (l *Limits) Pause(d time.Duration) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if d > 0 {
		l.named = now
	} else {
		d = l.cfg.Cooldown
		for i := 0; i < l.streak && d < l.cfg.MaxCooldown; i++ {
			d *= 2
		}
		l.streak++
	}
	d = min(d, l.cfg.MaxCooldown)
	if until := now.Add(d); until.After(l.until) {
		l.until = until
	}
	return d
}

// PausedUntil returns the end of the current pause; a time in the past
// when there is none.
func (l *Limits) PausedUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// namedSince reports whether a pause of a named delay began after t.
func (l *Limits) namedSince(t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.named.Before(t)
}

func (l *Limits) succeeded() {
	l.mu.Lock()
	l.streak = 0
	l.mu.Unlock()
}

// Acquire waits for a call's turn: a slot in flight, the end of any pause
// and a rate token, in that order, checking the pause again after the
// token (a pause that began meanwhile is waited out too). The caller
// makes its call and then calls release, once. Errors: ctx.Err() when ctx
// ends first; nothing is held then.
func (l *Limits) Acquire(ctx context.Context) (release func(), err error) {
	if l.sem != nil {
		if err := l.sem.Acquire(ctx, 1); err != nil {
			return nil, err
		}
	}
	releaseSem := func() {
		if l.sem != nil {
			l.sem.Release(1)
		}
	}
	waited := false
	for {
		w, err := l.waitPause(ctx)
		waited = waited || w
		if err != nil {
			releaseSem()
			return nil, err
		}
		if l.lim != nil {
			if err := l.lim.Wait(ctx); err != nil {
				releaseSem()
				return nil, err
			}
		}
		if !time.Now().Before(l.PausedUntil()) {
			break
		}
	}
	if waited {
		l.paused.Add(1)
	}
	l.calls.Add(1)
	n := l.inFlight.Add(1)
	for {
		p := l.peak.Load()
		if n <= p || l.peak.CompareAndSwap(p, n) {
			break
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.inFlight.Add(-1)
			releaseSem()
		})
	}, nil
}

// waitPause sleeps until the pause ends; waited says whether it slept.
func (l *Limits) waitPause(ctx context.Context) (waited bool, err error) {
	for {
		d := time.Until(l.PausedUntil())
		if d <= 0 {
			return waited, ctx.Err()
		}
		waited = true
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return waited, ctx.Err()
		case <-t.C:
		}
	}
}

// Wrap returns m with every call going through the limits: Acquire before
// it, release after it, and after a rate-limit answer (ratelimit.IsRateLimited) a
// Pause of the delay the answer names (ratelimit.Delay) or the cooldown, then
// up to Retries tries again. The wrapper keeps m's identity
// (maker.ModelIdentity) and price (maker.Priced), so journals written
// without the limits resume with them; an *maker.Ensemble is rebuilt from
// wrapped members, so its per-member report is kept. A nil l returns m.
func (l *Limits) Wrap(m llms.Model) llms.Model {
	if l == nil || m == nil {
		return m
	}
	switch w := m.(type) {
	case *limited:
		if w.l == l {
			return m
		}
	case *limitedPriced:
		if w.l == l {
			return m
		}
	case *maker.Ensemble:
		ms := w.Members()
		for i := range ms {
			ms[i] = l.Wrap(ms[i])
		}
		e, err := maker.NewEnsemble(ms...)
		if err == nil {
			return e
		}
	}
	lm := &limited{Model: m, l: l}
	if p, ok := m.(maker.Priced); ok {
		return &limitedPriced{limited: lm, priced: p}
	}
	return lm
}

// limited is a model behind Limits.
type limited struct {
	llms.Model
	l *Limits
}

// limitedPriced is a limited model that knows its price.
type limitedPriced struct {
	*limited
	priced maker.Priced
}

// Price is the wrapped model's price.
func (m *limitedPriced) Price() maker.Price { return m.priced.Price() }

// Identity is the wrapped model's identity.
func (m *limited) Identity() string { return maker.ModelIdentity(m.Model) }

// Unwrap returns the wrapped model.
func (m *limited) Unwrap() llms.Model { return m.Model }

// GenerateContent makes the call through the limits.
func (m *limited) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	l := m.l
	for attempt := 0; ; attempt++ {
		release, err := l.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		started := time.Now()
		resp, err := m.Model.GenerateContent(ctx, msgs, opts...)
		if err == nil {
			release()
			l.succeeded()
			return resp, nil
		}
		if ctx.Err() != nil || !ratelimit.IsRateLimited(err) {
			release()
			return resp, err
		}
		// The pause begins before the slot is given back, so no call
		// can slip in between.
		l.rateLimited.Add(1)
		if d, ok := ratelimit.Delay(err); ok {
			l.Pause(max(d, time.Millisecond))
		} else if !l.namedSince(started) {
			// No delay named, and none came with the answer's header
			// (see Transport): the cooldown.
			l.Pause(0)
		}
		release()
		if attempt >= l.cfg.Retries {
			return resp, err
		}
		l.retried.Add(1)
	}
}

// Call implements llms.Model's single-prompt method through the limits.
func (m *limited) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// Transport returns an http.RoundTripper over base (nil means
// http.DefaultTransport) that reads the Retry-After header of every 429
// or 503 answer (seconds or an HTTP date) and pauses the limits for it,
// before the client sees the answer. langchaingo's clients drop the
// header from their errors; give them an http.Client with this transport
// (openai.WithHTTPClient) to honour it exactly. It changes no request and
// no answer.
func (l *Limits) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &pauseTransport{base: base, l: l}
}

type pauseTransport struct {
	base http.RoundTripper
	l    *Limits
}

// RoundTrip sends req through the base transport and pauses the limits
// for the Retry-After of a 429 or 503 answer.
func (t *pauseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := models.ParseRetryAfter(resp.Header, time.Now()); ok {
			t.l.Pause(max(d, time.Millisecond))
		}
	}
	return resp, err
}
