// Package fault wraps an llms.Model with the faults real providers show:
// errors, rate limits with a delay, timeouts, hangs until the caller gives
// up, garbage text, replies cut at the length limit, and slow replies. It
// is for tests and benchmarks, mdap's and its users': each fault strikes a
// configured share of calls, drawn from a seed and the sample's identity,
// so a faulty run is reproducible.
//
// Which calls fail: a call carrying a sample identity (maker.SampleIDFrom,
// as the solver's calls do) draws its fault from (Seed, step, index) alone,
// whatever the order or concurrency of calls; a call without one draws from
// a per-model call counter instead.
package fault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/internal/wait"
	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// ErrInjected is wrapped by every error this package makes up (a rate
// limit is also an *llms.Error with code llms.ErrCodeRateLimit, a timeout
// also context.DeadlineExceeded), so a test can tell its own faults from
// real ones.
var ErrInjected = errors.New("injected")

// ErrConfig: a Config share is outside [0, 1], the shares add up to more
// than 1, or a duration is negative.
var ErrConfig = fielderr.ErrConfig

// Config sets the share of calls that meet each fault. The shares are
// exclusive (a call meets at most one) and must add up to at most 1; the
// rest of the calls pass through untouched. The zero Config injects
// nothing.
type Config struct {
	// Seed is the root of every draw.
	Seed uint64
	// Error: the call fails with a plain provider error.
	Error float64
	// RateLimit: the call fails with a rate-limit error
	// (llms.IsRateLimitError is true) whose Details["retry_after"] holds
	// RetryAfter, as a provider's 429 with a Retry-After header.
	RateLimit  float64
	RetryAfter time.Duration
	// Timeout: the call waits TimeoutAfter (or until ctx ends), then
	// fails with an error wrapping context.DeadlineExceeded, as a client's
	// own timeout would.
	Timeout      float64
	TimeoutAfter time.Duration
	// Hang: the call blocks until ctx ends, then returns ctx.Err(); only a
	// caller's timeout ends it.
	Hang float64
	// Garbage: the call returns text with no answer in it.
	Garbage float64
	// Cut: the call returns the wrapped model's reply cut in half with
	// StopReason "length", as a provider stopping at the token cap.
	Cut float64
	// Slow: the call is delayed by SlowBy before the wrapped model
	// answers.
	Slow   float64
	SlowBy time.Duration
}

// Validate returns nil or an error wrapping ErrConfig naming the field.
func (c Config) Validate() error {
	sum := 0.0
	for _, f := range []struct {
		name string
		v    float64
	}{{"Error", c.Error}, {"RateLimit", c.RateLimit}, {"Timeout", c.Timeout}, {"Hang", c.Hang}, {"Garbage", c.Garbage}, {"Cut", c.Cut}, {"Slow", c.Slow}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("%w: %s = %v, want a share in [0, 1]", ErrConfig, f.name, f.v)
		}
		sum += f.v
	}
	if sum > 1+1e-12 {
		return fmt.Errorf("%w: the shares add up to %v, want at most 1", ErrConfig, sum)
	}
	if c.RetryAfter < 0 || c.TimeoutAfter < 0 || c.SlowBy < 0 {
		return fmt.Errorf("%w: a negative duration", ErrConfig)
	}
	return nil
}

// Total is the share of calls that meet a fault.
func (c Config) Total() float64 {
	return c.Error + c.RateLimit + c.Timeout + c.Hang + c.Garbage + c.Cut + c.Slow
}

// Kind names a fault.
type Kind string

// The faults, as Model.Count reports them.
const (
	KindNone      Kind = "none"
	KindError     Kind = "error"
	KindRateLimit Kind = "rate_limit"
	KindTimeout   Kind = "timeout"
	KindHang      Kind = "hang"
	KindGarbage   Kind = "garbage"
	KindCut       Kind = "cut"
	KindSlow      Kind = "slow"
)

// Model is a faulty llms.Model, safe for concurrent use if the wrapped one
// is.
type Model struct {
	inner  llms.Model
	cfg    Config
	calls  atomic.Uint64
	counts [8]atomic.Int64
}

var _ llms.Model = (*Model)(nil)

// Wrap returns m with the faults of c. Errors: ErrConfig (wrapped).
func Wrap(m llms.Model, c Config) (*Model, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil model", ErrConfig)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Model{inner: m, cfg: c}, nil
}

var kinds = []Kind{KindNone, KindError, KindRateLimit, KindTimeout, KindHang, KindGarbage, KindCut, KindSlow}

// Count returns how many calls met fault k so far.
func (m *Model) Count(k Kind) int64 {
	for i, x := range kinds {
		if x == k {
			return m.counts[i].Load()
		}
	}
	return 0
}

// Identity is the wrapped model's identity: faults change no answer a
// sample gives when it gets one, so a run resumed without them is the
// same run.
func (m *Model) Identity() string { return maker.ModelIdentity(m.inner) }

// draw picks the call's fault.
func (m *Model) draw(ctx context.Context) (Kind, *rand.Rand) {
	var a, b uint64
	if id, ok := maker.SampleIDFrom(ctx); ok {
		a, b = uint64(id.Step)+1, uint64(id.Index)
	} else {
		a, b = 0, m.calls.Add(1)
	}
	return m.drawFor(a, b)
}

// Fault returns the fault a call carrying sample identity id meets
// (KindNone for none): the draw GenerateContent makes for it, whatever
// the order or timing of calls. A test uses it to tell an injected
// failure from any other. Cost: O(1).
func (m *Model) Fault(id maker.SampleID) Kind {
	k, _ := m.drawFor(uint64(id.Step)+1, uint64(id.Index))
	return k
}

// drawFor draws the fault of the call keyed (a, b).
func (m *Model) drawFor(a, b uint64) (Kind, *rand.Rand) {
	r := rand.New(rand.NewPCG(m.cfg.Seed^0x5eed_fa17_0000_0000, a*0x9e3779b97f4a7c15^b))
	u := r.Float64()
	c := m.cfg
	for i, share := range []float64{c.Error, c.RateLimit, c.Timeout, c.Hang, c.Garbage, c.Cut, c.Slow} {
		if u < share {
			return kinds[i+1], r
		}
		u -= share
	}
	return KindNone, r
}

// GenerateContent answers through the wrapped model, unless the call
// meets a fault.
func (m *Model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	k, r := m.draw(ctx)
	for i, x := range kinds {
		if x == k {
			m.counts[i].Add(1)
		}
	}
	switch k {
	case KindError:
		return nil, fmt.Errorf("%w: provider error (503 service unavailable)", ErrInjected)
	case KindRateLimit:
		e := llms.NewError(llms.ErrCodeRateLimit, "fault", "429 too many requests").WithCause(ErrInjected)
		return nil, e.WithDetail("retry_after", m.cfg.RetryAfter)
	case KindTimeout:
		if err := wait.Sleep(ctx, m.cfg.TimeoutAfter); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w: the call timed out", ErrInjected, context.DeadlineExceeded)
	case KindHang:
		<-ctx.Done()
		return nil, ctx.Err()
	case KindGarbage:
		return maker.TextResponse(garbage(r), "stop"), nil
	case KindSlow:
		if err := wait.Sleep(ctx, m.cfg.SlowBy); err != nil {
			return nil, err
		}
	}
	resp, err := m.inner.GenerateContent(ctx, msgs, opts...)
	if k != KindCut || err != nil || resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return resp, err
	}
	c := *resp.Choices[0]
	c.Content = c.Content[:len(c.Content)/2]
	c.StopReason = "length"
	c.ToolCalls = nil
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{&c}}, nil
}

// Call implements llms.Model's single-prompt method.
func (m *Model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

var words = strings.Fields("lorem ipsum the quick brown fox jumps over lazy dog zebra quartz cloud fog maybe")

func garbage(r *rand.Rand) string {
	var b strings.Builder
	for i := range 12 + r.IntN(20) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}
